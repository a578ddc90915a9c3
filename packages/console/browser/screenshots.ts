/**
 * Regenerates the console's screenshots in docs/console (`npm run screenshots:console`): a real
 * `warren serve` with a small network in it, every page at 1280 px and 390 px in Chromium.
 * Only this script writes them; the browser tests leave the working tree untouched.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { buildConsole, enroll, launch, signedIn, startWarren, WIDTHS } from './harness.ts';

const SHOTS = resolve(import.meta.dirname, '..', '..', '..', 'docs', 'console');
const OWNER = 'admin@example.com';

buildConsole();
const browser = await launch();
const warren = await startWarren();
try {
  await warren.call('PUT', '/v1/acl', {
    tagOwners: { 'tag:web': [OWNER], 'tag:db': [OWNER] },
    acls: [{ action: 'accept', src: ['*'], dst: ['tag:web:443'] }],
  });
  const web = await enroll(warren, ['web-1', 'web-2'], { tags: ['tag:web'] });
  await enroll(warren, ['db-1', 'laptop-ana']);
  await enroll(warren, ['router-1'], { advertiseRoutes: ['10.20.0.0/16'] });
  for (const device of web) await warren.call('POST', '/v1/node/heartbeat', {}, device.nodeToken);
  await warren.call('POST', '/v1/users', { loginName: 'audra@example.com', role: 'auditor' });
  await warren.call('PATCH', '/v1/network', {
    dns: {
      nameservers: ['1.1.1.1'],
      splitDns: { 'corp.example': ['10.0.0.53'] },
      extraRecords: [{ name: 'db.corp.example', type: 'A', value: '10.0.0.7' }],
    },
  });
  const devices = await warren.call('GET', '/v1/devices');
  mkdirSync(SHOTS, { recursive: true });
  for (const [width, viewport] of Object.entries(WIDTHS)) {
    const { context, page } = await signedIn(browser, warren, OWNER, viewport);
    for (const [name, path] of [
      ['devices', '/devices'],
      ['device', `/devices/${devices.devices[0].id}`],
      ['policy', '/policy'],
      ['keys', '/keys'],
      ['users', '/users'],
      ['routes', '/routes'],
      ['logs', '/logs?log=audit'],
      ['network', '/network'],
      ['events', '/events'],
      ['webhooks', '/webhooks'],
    ] as const) {
      await page.goto(path);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      // The network page's settings run below the fold: shown whole.
      await page.screenshot({ path: join(SHOTS, `${name}-${width}.png`), fullPage: name === 'network' });
    }
    await context.close();
  }
  process.stdout.write(`Screenshots written to ${SHOTS}\n`);
} finally {
  await browser.close();
  await warren.stop();
}

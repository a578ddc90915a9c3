// Console benchmark: `npx tsx bench/console.bench.ts [--count 10000] [--baseline 100]`.
//
// Time to first render of the console's devices page in Chromium (/usr/bin/chromium, or
// CHROMIUM_PATH) against a real `warren serve`: from navigation start to the table's first row,
// median of 5 loads, at --baseline devices (the baseline, measured in the same run) and at
// --count devices, and their ratio. The table is paged (100 rows), so the ratio measures what
// 10,000 records cost to fetch and sort, not to draw.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import { initWarren, serveWarren } from './warren-process.ts';

const { values } = parseArgs({ options: { count: { type: 'string' }, baseline: { type: 'string' } } });
const count = Number(values.count ?? 10_000);
const baseline = Number(values.baseline ?? 100);
const LOADS = 5;
const warrenBin = join(import.meta.dirname, '..', 'packages', 'cli', 'bin', 'warren.js');

execFileSync(
  process.execPath,
  [join(import.meta.dirname, '..', 'packages', 'console', 'scripts', 'build-if-stale.mjs')],
  {
    stdio: 'inherit',
  },
);
const dir = mkdtempSync(join(tmpdir(), 'warren-bench-console-'));
const db = `sqlite:${join(dir, 'warren.db')}`;
const apiKey = initWarren(db);
const { url, child } = await serveWarren(db);

async function call(path: string, body: unknown, token = apiKey): Promise<any> {
  const res = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

const authKey = (await call('/v1/keys', { reusable: true, expiresIn: '1d' })).key as string;
let enrolled = 0;
async function enrollUpTo(total: number): Promise<void> {
  const next = async () => {
    while (enrolled < total) {
      const n = enrolled++;
      await call(
        '/v1/node/register',
        { hostname: `host-${n}`, os: 'linux', nodeKey: `nodekey:${randomBytes(32).toString('hex')}` },
        authKey,
      );
    }
  };
  await Promise.all(Array.from({ length: 16 }, next));
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
});
const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
const page = await context.newPage();
const link = JSON.parse(
  execFileSync(
    process.execPath,
    [
      warrenBin,
      'console',
      'login',
      '--network',
      'bench',
      '--user',
      'admin@example.com',
      '--db',
      db,
      '--url',
      url,
      '--json',
    ],
    {
      encoding: 'utf8',
    },
  ),
).url as string;
await page.goto(link);
await page.waitForURL(`${url}/`);

/** ms from navigation start to the first row of the devices table. */
async function firstRender(p: Page): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < LOADS; i++) {
    await p.goto(`${url}/devices`);
    await p.locator('tbody tr').first().waitFor({ timeout: 60_000 });
    times.push(await p.evaluate(() => performance.now()));
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

try {
  await enrollUpTo(baseline);
  const base = await firstRender(page);
  const started = Date.now();
  await enrollUpTo(count);
  const enrollSeconds = (Date.now() - started) / 1000;
  const full = await firstRender(page);
  console.log(`console benchmark: devices page, Chromium, server on SQLite ${dir}`);
  console.log(`  enrolled ${count - baseline} more devices in ${enrollSeconds.toFixed(1)} s`);
  console.log(`  first render at ${baseline} devices (baseline): ${base.toFixed(0)} ms (median of ${LOADS})`);
  console.log(`  first render at ${count} devices: ${full.toFixed(0)} ms (median of ${LOADS})`);
  console.log(`  ratio ${(full / base).toFixed(2)}`);
} finally {
  await browser.close();
  child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}

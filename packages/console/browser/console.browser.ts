/**
 * The console in Chromium against a real server: sign in with a one-time link, filter devices,
 * fix a policy error shown at its line and save, create a key and copy its secret, approve a
 * route, tail the connection log, a read-only role sees no write controls, and axe-core finds
 * no serious or critical violation on any page at 1280 px and 390 px.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, buildConsole, enroll, launch, signedIn, startWarren, type Warren, WIDTHS } from './harness.ts';

const OWNER = 'admin@example.com';

describe('the web console', () => {
  let warren: Warren;
  let browser: Browser;
  let routed: { id: string; nodeToken: string };

  beforeAll(async () => {
    buildConsole();
    warren = await startWarren();
    browser = await launch();
    await warren.call('PUT', '/v1/acl', {
      tagOwners: { 'tag:web': [OWNER] },
      acls: [{ action: 'accept', src: ['*'], dst: ['tag:web:443'] }],
    });
    await enroll(warren, ['web-1', 'web-2'], { tags: ['tag:web'] });
    await enroll(warren, ['db-1']);
    [routed] = await enroll(warren, ['router-1'], { advertiseRoutes: ['10.20.0.0/16'] });
    await warren.call('POST', '/v1/users', { loginName: 'audra@example.com', role: 'auditor' });
  });
  afterAll(async () => {
    await browser?.close();
    await warren?.stop();
  });

  it('signs in with a one-time link, and the link works only once', async () => {
    const link = warren.signInLink(OWNER);
    const first = await browser.newContext({ baseURL: warren.url });
    const page = await first.newPage();
    await page.goto(link);
    await page.waitForURL(`${warren.url}/`);
    await page.locator('.who').getByText(OWNER).waitFor();
    expect((await first.request.get('/v1/me')).status()).toBe(200);
    await first.close();
    const second = await browser.newContext({ baseURL: warren.url });
    await (await second.newPage()).goto(link);
    expect((await second.request.get('/v1/me')).status()).toBe(401);
    await second.close();
  });

  it('filters devices by tag and online state, with the filters in the URL and back working', async () => {
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    await page.getByRole('link', { name: 'db-1', exact: true }).waitFor();
    await page.getByLabel('Tag').fill('tag:web');
    await page.waitForURL(/tag=tag%3Aweb/);
    // The filtered answer replaces the table (it may pass through its loading state first).
    await page.getByRole('link', { name: 'db-1', exact: true }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'web-1', exact: true }).waitFor();
    await page.getByRole('link', { name: 'web-2', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: /^web-/ }).count()).toBe(2);
    expect(await page.getByRole('link', { name: 'db-1', exact: true }).count()).toBe(0);
    await page.getByLabel('Online').selectOption('false');
    await page.getByText('No device matches these filters').waitFor();
    await page.getByLabel('Online').selectOption('true');
    await page.getByRole('link', { name: 'web-2' }).waitFor();
    await page.getByRole('link', { name: 'web-1' }).click();
    await page.getByRole('heading', { name: 'Addresses' }).waitFor();
    await page.goBack();
    await page.waitForURL(/tag=tag%3Aweb/);
    await page.getByRole('link', { name: 'web-2' }).waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows a policy error at its line, and saves once it is fixed', async () => {
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    await page.getByRole('link', { name: 'Policy' }).click();
    const editor = page.getByLabel('Policy (HuJSON)');
    await editor.waitFor();
    // The style-src has no 'unsafe-inline': CodeMirror's stylesheet applies only through the nonce.
    const styling = await page.evaluate(() => ({
      gutters: getComputedStyle(document.querySelector('.cm-gutters') as Element).display,
      nonced: [...document.querySelectorAll('style')].filter((s) => s.nonce).length,
    }));
    expect(styling.gutters).toBe('flex');
    expect(styling.nonced).toBeGreaterThan(0);
    const good =
      '{\n  // everyone reaches the web servers\n  "tagOwners": { "tag:web": ["admin@example.com"] },\n  "acls": [\n    { "action": "accept", "src": ["*"], "dst": ["tag:web:443"] }\n  ]\n}\n';
    const bad = good.replace('"accept"', '"acept"');
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    await page.evaluate((text) => navigator.clipboard.writeText(text), bad);
    await page.keyboard.press('ControlOrMeta+v');
    const problem = page.locator('.problems li').first();
    await problem.waitFor();
    expect(await problem.textContent()).toMatch(/^Line 5, column \d+/);
    expect(await page.locator('.cm-lintRange-error').count()).toBeGreaterThan(0);
    expect(await page.getByRole('button', { name: 'Review and save' }).isDisabled()).toBe(true);

    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    await page.evaluate((text) => navigator.clipboard.writeText(text), good);
    await page.keyboard.press('ControlOrMeta+v');
    await page.getByText('No problems.').waitFor();
    await page.getByRole('button', { name: 'Review and save' }).click();
    await page.locator('.cm-mergeView').waitFor();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Policy saved.').waitFor();
    const stored = await fetch(`${warren.url}/v1/acl`, {
      headers: { authorization: `Bearer ${warren.apiKey}`, accept: 'application/hujson' },
    });
    expect(await stored.text()).toContain('// everyone reaches the web servers');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('shows what changed when someone else saved the policy meanwhile, and saves over it when asked', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/policy');
    const editor = page.getByLabel('Policy (HuJSON)');
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press('ControlOrMeta+End');
    await page.keyboard.type('\n// mine\n');
    await page.getByText('No problems.').waitFor();
    await warren.call('PUT', '/v1/acl', {
      tagOwners: { 'tag:web': [OWNER], 'tag:db': [OWNER] },
      acls: [{ action: 'accept', src: ['*'], dst: ['tag:web:443'] }],
    });
    await page.getByRole('button', { name: 'Review and save' }).click();
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Someone saved the policy since you opened it.').waitFor();
    expect(await page.locator('.cm-mergeView').textContent()).toContain('tag:db');
    await page.getByRole('button', { name: 'Save mine over it' }).click();
    await page.getByText('Policy saved.').waitFor();
    await context.close();
  });

  it('shows a member only the devices section', async () => {
    await warren.call('POST', '/v1/users', { loginName: 'mia@example.com', role: 'member' });
    const { context, page } = await signedIn(browser, warren, 'mia@example.com');
    const sections = await page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();
    expect(sections).toEqual(['Devices']);
    await page.getByText('No devices yet').waitFor();
    await context.close();
  });

  it('creates an auth key and copies its secret, shown once', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByLabel('Tags').fill('tag:web');
    await page.getByLabel('Reusable').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByTestId('secret').textContent();
    expect(secret).toMatch(/^wrn_auth_/);
    await page.getByRole('button', { name: 'Copy the secret' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.getByRole('button', { name: 'I have stored it' }).click();
    expect(await page.getByTestId('secret').count()).toBe(0);
    await context.close();
  });

  it('lists the pending route first and approves it', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.getByRole('link', { name: 'Routes' }).click();
    await page.getByText('1 route(s) wait for approval.').waitFor();
    await page.getByRole('button', { name: 'Approve 10.20.0.0/16 on router-1' }).click();
    await page.getByRole('button', { name: 'Disable 10.20.0.0/16 on router-1' }).waitFor();
    const routes = await warren.call('GET', '/v1/routes');
    expect(routes.routes[0]).toMatchObject({ prefix: '10.20.0.0/16', state: 'approved' });
    await context.close();
  });

  it('tails the connection log as entries arrive', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/logs?follow=1');
    await page
      .getByText(/Nothing logged|Start/)
      .first()
      .waitFor();
    const now = new Date().toISOString();
    const router = await warren.call('GET', `/v1/devices/${routed.id}`);
    const source = router.addresses.find((a: string) => a.includes('.'));
    await warren.call(
      'POST',
      '/v1/node/connections',
      {
        entries: [
          {
            start: now,
            end: now,
            proto: 'tcp',
            src: { addr: `${source}:51000` },
            dst: { addr: '100.64.0.7:5432' },
            txBytes: 10,
            rxBytes: 20,
            txPackets: 1,
            rxPackets: 1,
          },
        ],
      },
      routed.nodeToken,
    );
    await page.getByText('100.64.0.7:5432').waitFor({ timeout: 15_000 });
    await context.close();
  });

  it('offers a read-only role no write control', async () => {
    const { context, page } = await signedIn(browser, warren, 'audra@example.com');
    for (const path of ['/devices', '/keys', '/users', '/routes', '/network', '/webhooks']) {
      await page.goto(path);
      await page.locator('main h1').waitFor();
      await page.waitForLoadState('networkidle');
      for (const name of [
        /delete/i,
        /create key/i,
        /add user/i,
        /add endpoint/i,
        /send a test/i,
        /approve/i,
        /save/i,
        /remove/i,
        /suspend/i,
      ]) {
        expect(await page.getByRole('button', { name }).count(), `${path} ${name}`).toBe(0);
      }
    }
    await page.goto('/policy');
    await page.getByLabel('Policy (HuJSON)').waitFor();
    expect(await page.getByRole('button', { name: 'Review and save' }).count()).toBe(0);
    expect(await page.getByLabel('Policy (HuJSON)').getAttribute('contenteditable')).toBe('false');
    await context.close();
  });

  for (const viewport of Object.values(WIDTHS)) {
    // Screenshots for the docs are made on demand (npm run screenshots:console), never by the
    // tests: a test run leaves the working tree as it found it.
    it(`passes axe on every page at ${viewport.width} px, with nothing scrolling sideways`, async () => {
      const { context, page, problems } = await signedIn(browser, warren, OWNER, viewport);
      const devices = await warren.call('GET', '/v1/devices');
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
        expect(await axe(page), `${name} at ${viewport.width} px`).toEqual([]);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow, `${name} scrolls sideways at ${viewport.width} px`).toBeLessThanOrEqual(0);
      }
      expect(problems).toEqual([]);
      await context.close();
    });
  }
});

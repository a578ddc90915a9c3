/**
 * Every role in the console, in Chromium against a real server: each page a role can reach
 * loads with no call the server refuses (no 4xx or 5xx of any kind, the favicon included) and
 * nothing logged as an error in the browser console; pages outside the role explain themselves
 * without calling anything; each page has a title of its own, and the favicon is served.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, enroll, launch, signedIn, startWarren, type Warren } from './harness.ts';

const OWNER = 'admin@example.com';
const SECTIONS: [string, string][] = [
  ['/devices', 'Devices'],
  ['/routes', 'Routes'],
  ['/policy', 'Policy'],
  ['/keys', 'Keys'],
  ['/users', 'Users'],
  ['/logs', 'Logs'],
  ['/logs?log=audit', 'Logs'],
  ['/events', 'Events'],
  ['/webhooks', 'Webhooks'],
  ['/network', 'Network default'],
];

/** What went wrong while a page was shown: refused calls and console errors. */
function watch(page: Page): { refused: string[]; errors: string[]; calls: string[] } {
  const seen = { refused: [] as string[], errors: [] as string[], calls: [] as string[] };
  page.on('response', (res) => {
    const url = new URL(res.url());
    seen.calls.push(`${res.request().method()} ${url.pathname}`);
    if (res.status() >= 400) seen.refused.push(`${res.status()} ${res.request().method()} ${url.pathname}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error') seen.errors.push(m.text());
  });
  page.on('pageerror', (e) => seen.errors.push(String(e)));
  return seen;
}

describe('each role in the web console', () => {
  let warren: Warren;
  let browser: Browser;
  let deviceId: string;

  beforeAll(async () => {
    buildConsole();
    warren = await startWarren();
    browser = await launch();
    await warren.call('PUT', '/v1/acl', {
      tagOwners: { 'tag:web': [OWNER] },
      acls: [{ action: 'accept', src: ['*'], dst: ['tag:web:443'] }],
      tests: [{ src: 'tag:web', accept: ['tag:web:443'] }],
    });
    [{ id: deviceId }] = (await enroll(warren, ['web-1'], { tags: ['tag:web'], advertiseRoutes: ['10.9.0.0/24'] })) as [
      { id: string },
    ];
    for (const [login, role] of [
      ['ada@example.com', 'admin'],
      ['nia@example.com', 'network-admin'],
      ['ita@example.com', 'it-admin'],
      ['audra@example.com', 'auditor'],
      ['mia@example.com', 'member'],
    ]) {
      await warren.call('POST', '/v1/users', { loginName: login, role });
    }
  });
  afterAll(async () => {
    await browser?.close();
    await warren?.stop();
  });

  for (const [login, role] of [
    [OWNER, 'owner'],
    ['ada@example.com', 'admin'],
    ['nia@example.com', 'network-admin'],
    ['ita@example.com', 'it-admin'],
    ['audra@example.com', 'auditor'],
  ] as const) {
    it(`lets ${role} open every page with no refused call and no console error`, async () => {
      const { context, page } = await signedIn(browser, warren, login);
      const seen = watch(page);
      for (const [path, title] of [...SECTIONS, [`/devices/${deviceId}`, 'web-1'] as [string, string]]) {
        await page.goto(path);
        await page.locator('main h1').waitFor();
        await page.waitForLoadState('networkidle');
        expect(await page.locator('main h1').first().textContent(), path).toBe(title);
        expect(await page.title(), path).toBe(`${title} · Warren`);
        expect(await page.getByRole('button', { name: 'Try again' }).count(), path).toBe(0);
      }
      expect(seen.refused).toEqual([]);
      expect(seen.errors).toEqual([]);
      // The favicon every browser asks for is served, not refused (headless Chromium asks for none).
      expect(await page.locator('link[rel="icon"]').getAttribute('href')).toBe('/favicon.ico');
      const icon = await page.request.get('/favicon.ico');
      expect(icon.status()).toBe(200);
      expect(icon.headers()['content-type']).toBe('image/x-icon');
      await context.close();
    });
  }

  it('lets an auditor read the policy without validating it, and says why no test results show', async () => {
    const { context, page } = await signedIn(browser, warren, 'audra@example.com');
    const seen = watch(page);
    await page.goto('/policy');
    await page.getByLabel('Policy (HuJSON)').waitFor();
    await page.getByText('Checking it and running its tests is for those who may change it').waitFor();
    await page.waitForTimeout(1000); // longer than the editor's validation delay
    expect(seen.calls.filter((c) => c.includes('/v1/acl/validate'))).toEqual([]);
    expect(await page.getByText('This policy has no tests').count()).toBe(0);
    expect(seen.refused).toEqual([]);
    await context.close();
  });

  it('offers an it-admin only the roles and key scopes within their own, and no role change for those above them', async () => {
    const { context, page } = await signedIn(browser, warren, 'ita@example.com');
    const seen = watch(page);
    await page.goto('/users');
    await page.getByLabel('Role of mia@example.com').waitFor();
    const options = (select: string) => page.getByLabel(select).locator('option').allTextContents();
    expect(await options('Role of mia@example.com')).toEqual(['it-admin', 'auditor', 'member']);
    expect(
      await page.getByRole('form', { name: 'Add a user' }).getByLabel('Role').locator('option').allTextContents(),
    ).toEqual(['it-admin', 'auditor', 'member']);
    // An owner's, an admin's and a network admin's role are shown, not offered for change.
    for (const login of [OWNER, 'ada@example.com', 'nia@example.com']) {
      expect(await page.getByLabel(`Role of ${login}`).count(), login).toBe(0);
      // Nor are they offered for suspension or removal, which take their role's scopes too.
      const row = page.getByRole('row').filter({ hasText: login });
      expect(await row.getByRole('button', { name: /^(Suspend|Remove)$/ }).count(), login).toBe(0);
    }
    const mias = page.getByRole('row').filter({ hasText: 'mia@example.com' });
    expect(await mias.getByRole('button', { name: /^(Suspend|Remove)$/ }).count()).toBe(2);
    // A change within their roles is made, with no refused call.
    await page.getByLabel('Role of mia@example.com').selectOption('auditor');
    const save = page.getByRole('button', { name: 'Make mia@example.com auditor' });
    await save.click();
    await save.waitFor({ state: 'detached' });
    const users = (await warren.call('GET', '/v1/users')).users as { id: string; loginName: string; role: string }[];
    const mia = users.find((u) => u.loginName === 'mia@example.com')!;
    expect(mia.role).toBe('auditor');
    await warren.call('PATCH', `/v1/users/${mia.id}`, { role: 'member' });
    // A key they make is offered only the scopes they hold.
    await page.goto('/keys');
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByLabel('API key (scripts)').check();
    await page.getByRole('group', { name: 'Scopes' }).waitFor();
    const scopes = page.getByRole('group', { name: 'Scopes' }).getByRole('checkbox');
    expect(await scopes.evaluateAll((boxes) => boxes.map((b) => (b as HTMLInputElement).value))).toEqual([
      'read',
      'devices',
      'keys',
      'users',
    ]);
    expect(seen.refused).toEqual([]);
    expect(seen.errors).toEqual([]);
    await context.close();
  });

  it('shows a member their devices only, tells them how to add one, and explains pages outside the role', async () => {
    const { context, page } = await signedIn(browser, warren, 'mia@example.com');
    const seen = watch(page);
    await page.reload();
    await page.getByText('You have no devices yet. To add one, ask an administrator').waitFor();
    expect(await page.getByRole('link', { name: 'Keys' }).count()).toBe(0);
    for (const [path, label] of [
      ['/keys', 'Keys'],
      ['/policy', 'Policy'],
      ['/users', 'Users'],
      ['/logs', 'Logs'],
      ['/network', 'Network'],
    ]) {
      const before = seen.calls.filter((c) => c.startsWith('GET /v1/')).length;
      await page.goto(path);
      await page.getByText(`Your role (member) does not include the ${label} page.`).waitFor();
      await page.waitForLoadState('networkidle');
      // Only the session check of the fresh load: nothing the role may not call.
      expect(seen.calls.filter((c) => c.startsWith('GET /v1/')).slice(before)).toEqual(['GET /v1/me']);
      expect(await page.getByRole('button', { name: 'Try again' }).count()).toBe(0);
      expect(await page.title()).toBe(`${label} · Warren`);
    }
    expect(seen.refused).toEqual([]);
    expect(seen.errors).toEqual([]);
    await context.close();
  });
  it('lets a member open their own device and delete it, offering no change they may not make', async () => {
    const [{ id }] = (await enroll(warren, ['mia-laptop'], { user: 'mia@example.com' })) as [{ id: string }];
    const { context, page } = await signedIn(browser, warren, 'mia@example.com');
    const seen = watch(page);
    await page.getByRole('link', { name: 'mia-laptop' }).click();
    await page.locator('main h1').filter({ hasText: 'mia-laptop' }).waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByLabel('Add a tag').count()).toBe(0);
    expect(await page.getByRole('button', { name: /^Approve/ }).count()).toBe(0);
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Delete device' }).click();
    await page.getByText('You have no devices yet').waitFor();
    expect((await warren.call('GET', '/v1/devices')).devices.map((d: { id: string }) => d.id)).not.toContain(id);
    expect(seen.refused).toEqual([]);
    expect(seen.errors).toEqual([]);
    await context.close();
  });
});

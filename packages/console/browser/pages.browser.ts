/**
 * What people tripped on in the console, each in Chromium against a real server: role changes
 * and suspension need an explicit confirmation; keys (form on demand, the policy's tags
 * offered, nothing to delete on a revoked key); a used sign-in link explained on a page; the
 * SSO redirect URI before setting up; device detail facts and its route actions on one line;
 * the connection log by device name with human byte counts in start order, loaded on scroll;
 * the audit log's changes-only view; events with their subject and payload.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, enroll, launch, signedIn, startWarren, type Warren, WIDTHS } from './harness.ts';

const OWNER = 'admin@example.com';

describe('the console pages people tripped on', () => {
  let warren: Warren;
  let browser: Browser;
  let web: { id: string; nodeToken: string };
  let db: { id: string; nodeToken: string };
  let router: { id: string; nodeToken: string };

  beforeAll(async () => {
    buildConsole();
    warren = await startWarren();
    browser = await launch();
    await warren.call('PUT', '/v1/acl', {
      tagOwners: { 'tag:web': [OWNER], 'tag:db': [OWNER] },
      acls: [{ action: 'accept', src: ['*'], dst: ['tag:web:443'] }],
    });
    [web] = (await enroll(warren, ['web-1'], { tags: ['tag:web'] })) as [typeof web];
    [db] = (await enroll(warren, ['db-1'])) as [typeof db];
    [router] = (await enroll(warren, ['router-1'], { advertiseRoutes: ['10.20.0.0/16', '10.30.0.0/16'] })) as [
      typeof router,
    ];
  });
  afterAll(async () => {
    await browser?.close();
    await warren?.stop();
  });

  const userNamed = async (login: string) =>
    ((await warren.call('GET', '/v1/users')).users as { loginName: string; role: string; status: string }[]).find(
      (u) => u.loginName === login,
    )!;

  it('changes a role only with its Save button, and suspends only once confirmed', async () => {
    await warren.call('POST', '/v1/users', { loginName: 'rita@example.com', role: 'member' });
    const { context, page } = await signedIn(browser, warren, OWNER);
    const patches: string[] = [];
    page.on('request', (r) => {
      if (r.method() === 'PATCH') patches.push(r.url());
    });
    await page.goto('/users');
    const role = page.getByLabel('Role of rita@example.com');
    await role.focus();
    await page.keyboard.press('ArrowUp'); // one arrow key used to save "auditor" at once
    expect(await role.inputValue()).toBe('auditor');
    await page.waitForTimeout(500);
    expect(patches).toEqual([]);
    expect((await userNamed('rita@example.com')).role).toBe('member');
    await page.getByRole('button', { name: 'Keep rita@example.com member' }).click();
    expect(await role.inputValue()).toBe('member');

    await role.selectOption('it-admin');
    await page.getByRole('button', { name: 'Make rita@example.com it-admin' }).click();
    await page.getByRole('button', { name: 'Make rita@example.com it-admin' }).waitFor({ state: 'detached' });
    expect((await userNamed('rita@example.com')).role).toBe('it-admin');

    // The owner's display name reads as a name, not as a second role in parentheses.
    const owner = page.getByRole('row').filter({ hasText: OWNER });
    expect(await owner.getByRole('cell').first().textContent()).not.toContain('(');

    const row = page.getByRole('row').filter({ hasText: 'rita@example.com' });
    const dialogs: string[] = [];
    page.once('dialog', (d) => {
      dialogs.push(d.message());
      return d.dismiss();
    });
    await row.getByRole('button', { name: 'Suspend' }).click();
    expect(dialogs[0]).toMatch(/^Suspend rita@example.com\? Their console sessions end/);
    expect((await userNamed('rita@example.com')).status).toBe('active');
    page.once('dialog', (d) => d.accept());
    await row.getByRole('button', { name: 'Suspend' }).click();
    await row.getByRole('button', { name: 'Restore' }).waitFor();
    expect((await userNamed('rita@example.com')).status).toBe('suspended');
    await context.close();
  });

  it('opens the key form on demand, offers the policy tags, and offers no Delete on a revoked key', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/keys');
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    expect(await page.getByRole('heading', { name: 'Create a key' }).count()).toBe(0);
    await page.getByRole('button', { name: 'New key' }).click();
    await page.getByRole('heading', { name: 'Create a key' }).waitFor();
    // The tags come with the policy, read when the form opens: wait for them before counting.
    await page.getByRole('button', { name: 'Add tag:web' }).waitFor();
    const offered = await page
      .locator('#defined-tags option')
      .evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value).sort());
    expect(offered).toEqual(['tag:db', 'tag:web']);
    await page.getByRole('button', { name: 'Add tag:db' }).click();
    await page.getByRole('button', { name: 'Add tag:web' }).click();
    expect(await page.getByLabel('Tags').inputValue()).toBe('tag:db tag:web');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByTestId('secret').waitFor();
    expect(await page.getByRole('heading', { name: 'Create a key' }).count()).toBe(0);
    const keys = (await warren.call('GET', '/v1/keys?type=auth')).keys as { id: string; tags: string[] }[];
    const made = keys.find((k) => k.tags.join(' ') === 'tag:db tag:web')!;
    expect(made).toBeDefined();

    await warren.call('DELETE', `/v1/keys/${made.id}`);
    await page.reload();
    const revoked = page.getByRole('row').filter({ hasText: 'revoked' });
    await revoked.first().waitFor();
    expect(await revoked.getByRole('button', { name: /Delete/ }).count()).toBe(0);
    const valid = page.getByRole('row').filter({ hasText: 'valid' });
    expect(
      await valid
        .first()
        .getByRole('button', { name: /Delete/ })
        .count(),
    ).toBe(1);
    await context.close();
  });

  it('explains a used sign-in link on a page, not with a JSON body', async () => {
    const link = warren.signInLink(OWNER);
    const first = await browser.newContext({ baseURL: warren.url });
    await (await first.newPage()).goto(link);
    await first.close();
    const second = await browser.newContext({ baseURL: warren.url });
    const page = await second.newPage();
    await page.goto(link);
    await page.waitForURL(/\/signin\?problem=link_invalid$/);
    await page.getByRole('heading', { name: 'Sign in to Warren' }).waitFor();
    await page.getByText('This sign-in link no longer works.').waitFor();
    await page.getByText('Ask an administrator for a new link.', { exact: false }).waitFor();
    expect(await page.title()).toBe('Sign in · Warren');
    await second.close();
  });

  it('explains a single sign-on that cannot start on the sign-in page, not with a JSON body', async () => {
    const context = await browser.newContext({ baseURL: warren.url });
    const page = await context.newPage();
    await page.goto('/signin');
    await page.getByLabel('Network').fill('no-such-network');
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await page.waitForURL(/\/signin\?problem=sso_network$/);
    await page.getByText('No network of that name signs in with single sign-on.').waitFor();
    await context.close();
  });

  it('shows the SSO redirect URI before single sign-on is set up, with no 404 on the way', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    const refused: string[] = [];
    page.on('response', (r) => r.status() >= 400 && refused.push(`${r.status()} ${r.url()}`));
    await page.goto('/network');
    await page.getByText('Single sign-on is not set up').waitFor();
    expect(await page.getByTestId('redirect-uri').textContent()).toBe(`${warren.url}/auth/callback`);
    await page.getByRole('button', { name: 'Copy the redirect URI' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${warren.url}/auth/callback`);
    await page.waitForLoadState('networkidle');
    expect(refused).toEqual([]);
    await context.close();
  });

  it("shows a device's id, creation and key expiry, with each route's actions on its line at 1280 px", async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto(`/devices/${router.id}`);
    await page.getByRole('heading', { name: 'router-1', level: 1 }).waitFor();
    const facts = await page.locator('dl.facts').innerText();
    expect(facts).toContain(router.id);
    expect(facts).toMatch(/Created\s+(just now|\d+ (seconds?|minutes?) ago)/);
    // The network's default login lifetime is 180 days.
    expect(facts).toMatch(/Key expiry\s+in 6 months/);
    for (const prefix of ['10.20.0.0/16', '10.30.0.0/16']) {
      const approve = await page.getByRole('button', { name: `Approve ${prefix}` }).boundingBox();
      const code = await page.locator('li.route-line').filter({ hasText: prefix }).locator('code').boundingBox();
      // One line: the button's vertical extent holds the prefix's.
      expect(approve!.y).toBeLessThanOrEqual(code!.y);
      expect(approve!.y + approve!.height).toBeGreaterThanOrEqual(code!.y + code!.height);
    }
    await context.close();
  });

  it('shows the connection log by device name, in start order, with human byte counts, loaded on scroll', async () => {
    const address = async (id: string) =>
      ((await warren.call('GET', `/v1/devices/${id}`)).addresses as string[]).find((a) => a.includes('.'))!;
    const [webIp, dbIp] = [await address(web.id), await address(db.id)];
    const base = Date.now() - 30 * 60_000;
    // 150 entries, reported newest first, so recording order is the reverse of start order.
    const entries = Array.from({ length: 150 }, (_, i) => {
      const start = new Date(base + (149 - i) * 1000).toISOString();
      return {
        start,
        end: start,
        proto: 'tcp',
        src: { addr: `${webIp}:${40000 + i}` },
        dst: { addr: `${dbIp}:5432` },
        txBytes: 1_536_000 + i,
        rxBytes: 2048,
        txPackets: 1,
        rxPackets: 1,
      };
    });
    await warren.call('POST', '/v1/node/connections', { entries }, web.nodeToken);
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/logs');
    const rows = page.locator('table tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(100);
    const first = rows.first();
    expect(await first.locator('td').nth(1).innerText()).toMatch(/^web-1\s+100\.64\./);
    expect(await first.locator('td').nth(2).innerText()).toMatch(/^db-1\s+100\.64\.[\d.]+:5432$/);
    expect(await first.locator('td').nth(4).innerText()).toMatch(/^1\.5 MB \/ 2 kB$/);
    const starts = await page
      .locator('table tbody tr td:first-child time')
      .evaluateAll((t) => t.map((x) => Date.parse(x.getAttribute('datetime')!)));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    // Scrolling to the end loads the next page.
    await page.getByRole('button', { name: 'Load more entries' }).scrollIntoViewIfNeeded();
    await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 150);
    expect(await page.getByRole('button', { name: 'Load more entries' }).count()).toBe(0);

    // The device filter takes a name.
    await page.getByLabel('Device').fill('db-1');
    await page.waitForURL(/who=db-1/);
    await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 100);
    await page.getByLabel('Device').fill('router-1');
    await page.getByText('Nothing logged in the last 1h for router-1.').waitFor();
    await context.close();
  });

  it("shows the audit log's changes only by default, and every call when asked", async () => {
    for (let i = 0; i < 5; i++) await warren.call('GET', '/v1/devices');
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/logs?log=audit');
    await page.locator('table tbody tr').first().waitFor();
    expect(await page.getByLabel('Changes only').isChecked()).toBe(true);
    const calls = () => page.locator('table tbody tr td:nth-child(4)').allInnerTexts();
    expect((await calls()).filter((c) => c.startsWith('GET /v1/'))).toEqual([]);
    expect(await calls()).toContain('PUT /v1/acl');
    await page.getByLabel('Changes only').uncheck();
    await page.waitForURL(/calls=all/);
    await page.waitForFunction(() =>
      [...document.querySelectorAll('table tbody tr td:nth-child(4)')].some((c) =>
        c.textContent?.startsWith('GET /v1/'),
      ),
    );
    await context.close();
  });

  it('shows what each event is about, and its payload in a detail view', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/events?type=device.created');
    const row = page.getByRole('row').filter({ hasText: 'router-1' });
    await row.waitFor();
    expect(await row.getByRole('link', { name: 'router-1' }).getAttribute('href')).toBe(`/devices/${router.id}`);
    await row.getByRole('button', { name: 'Details of device.created router-1' }).click();
    const payload = JSON.parse((await page.locator('pre.payload').textContent())!);
    expect(payload.device).toMatchObject({ id: router.id, name: 'router-1' });
    expect(await row.getByRole('button', { name: /Details of/ }).getAttribute('aria-expanded')).toBe('true');
    await context.close();
  });
});

describe('the device list at scale', () => {
  let warren: Warren;
  let browser: Browser;
  let devices: { id: string; nodeToken: string }[];

  beforeAll(async () => {
    buildConsole();
    warren = await startWarren();
    browser = await launch();
    await warren.call('PUT', '/v1/acl', {
      tagOwners: { 'tag:web': [OWNER] },
      acls: [{ action: 'accept', src: ['*'], dst: ['tag:web:443'] }],
    });
    const names = Array.from({ length: 120 }, (_, i) => `node-${String(i).padStart(3, '0')}`);
    devices = await enroll(warren, names);
    // Offline from the start, so no presence event lands while a test watches the list.
    for (const device of devices) await warren.call('POST', '/v1/node/disconnect', undefined, device.nodeToken);
  });
  afterAll(async () => {
    await browser?.close();
    await warren?.stop();
  });

  it('asks the server for one page at a time and searches by name or address', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    const lists: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/v1/devices') lists.push(url.search);
    });
    await page.reload();
    await page.getByText('120 devices · showing 1–50').waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(50);
    expect(lists.every((q) => /[?&]limit=50(&|$)/.test(q))).toBe(true);
    const header = await page.locator('table thead th').allInnerTexts();
    expect(header.slice(1)).toEqual(['Name', 'Address', 'Owner', 'OS', 'Version', 'Last seen']);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'node-000', exact: true }) });
    expect(await row.innerText()).toMatch(
      /node-000\s+offline\s+100\.64\.0\.\d+\s+admin@example\.com\s+linux\s+1\.2\.3/,
    );

    await page.getByRole('button', { name: 'Next' }).click();
    await page.getByText('showing 51–100').waitFor();
    await page.getByRole('link', { name: 'node-050', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Previous' }).click();
    await page.getByRole('link', { name: 'node-000', exact: true }).waitFor();

    await page.getByLabel('Search').fill('node-11');
    await page.getByText('10 devices').waitFor();
    expect(lists.at(-1)).toContain('q=node-11');
    const detail = await warren.call('GET', `/v1/devices/${devices[77]!.id}`);
    await page.getByLabel('Search').fill(detail.addresses[0]);
    await page.getByRole('link', { name: 'node-077', exact: true }).waitFor();
    expect(await page.locator('table tbody tr').count()).toBe(1);
    await context.close();
  });

  it('refreshes from the events stream, not by fetching the list again on a timer', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    const calls: string[] = [];
    page.on('request', (r) => calls.push(new URL(r.url()).pathname));
    await page.reload();
    await page.getByText('120 devices').waitFor();
    const listed = () => calls.filter((c) => c === '/v1/devices').length;
    await page.waitForTimeout(6_000); // past the detector's tick for the disconnects above
    const before = listed();
    await page.waitForTimeout(12_000);
    expect(listed(), 'the list was fetched again with nothing changed').toBe(before);
    expect(calls.filter((c) => c === '/v1/events').length).toBeGreaterThanOrEqual(2);

    // A change: the tag shows up as the device's owner once its event arrives.
    await warren.call('POST', `/v1/devices/${devices[0]!.id}/tags`, { tags: ['tag:web'] });
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'node-000', exact: true }) });
    await row.getByText('tag:web').waitFor({ timeout: 15_000 });
    expect(await row.getByText('admin@example.com').count()).toBe(0);
    expect(listed()).toBe(before + 1);
    await context.close();
  });

  it('keeps the online state in view at 390 px', async () => {
    await warren.call('POST', '/v1/node/heartbeat', {}, devices[1]!.nodeToken);
    const { context, page } = await signedIn(browser, warren, OWNER, WIDTHS.phone);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'node-001', exact: true }) });
    const state = row.getByText('online', { exact: true });
    await state.waitFor({ timeout: 15_000 });
    const box = (await state.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    await context.close();
  });
});

/**
 * Devices waiting for approval, approved from the device list; and a device's login URL (or a
 * Tailscale SSH check URL) opened while signed out: the sign-in page says why, and signing in
 * leads back to the URL.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, enroll, launch, signedIn, startWarren, type Warren } from './harness.ts';

const OWNER = 'admin@example.com';

describe('logging devices in from the console', () => {
  let warren: Warren;
  let browser: Browser;

  beforeAll(async () => {
    buildConsole();
    warren = await startWarren();
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await warren?.stop();
  });

  it('shows a device waiting for approval with an Approve button that lets it in', async () => {
    await warren.call('PATCH', '/v1/network', { deviceApproval: true });
    const [device] = await enroll(warren, ['waiting-1']);
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    const row = page.getByRole('row', { name: /waiting-1/ });
    await row.getByText('waiting for approval').waitFor();
    await row.getByRole('button', { name: 'Approve waiting-1' }).click();
    await row.getByText('waiting for approval').waitFor({ state: 'detached' });
    expect((await warren.call('GET', `/v1/devices/${device!.id}`)).authorized).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
    await warren.call('PATCH', '/v1/network', { deviceApproval: false });
  });

  it('sends a signed-out person through sign-in and back to the login URL, which says when it is unknown', async () => {
    const context = await browser.newContext({ baseURL: warren.url });
    const page = await context.newPage();
    const loginPath = `/register/${'x'.repeat(43)}`;
    await page.goto(loginPath);
    await page.getByRole('heading', { name: 'Sign in to Warren' }).waitFor();
    await page.getByText('A device is asking to log in').waitFor();
    // Single sign-on carries the way back in returnTo.
    await page.getByLabel('Network').fill('default');
    const sso = page.waitForRequest((r) => r.url().includes('/auth/login'));
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    const started = new URL((await sso).url());
    expect(started.searchParams.get('returnTo')).toBe(loginPath);
    // A one-time link lands on /, and the console goes on to the login URL.
    await page.goto(warren.signInLink(OWNER));
    await page.waitForURL(`${warren.url}${loginPath}`);
    await page.getByRole('heading', { name: 'Log in a device' }).waitFor();
    await page.getByText('This login URL is not known.').waitFor();
    await context.close();
  });

  it('lets the source device’s owner confirm a Tailscale SSH session that a check rule holds', async () => {
    const [from, to] = await enroll(warren, ['ssh-from', 'ssh-to']);
    // The check a held connection makes (control/tailscale/ssh-action.ts), written as it stores
    // it: a Tailscale client to hold one is the end-to-end suite's (e2e/tailscale).
    const token = 'c'.repeat(43);
    const sqlite = new Database(warren.db.replace(/^sqlite:/, ''));
    const { network_id } = sqlite.prepare('select network_id from devices where id = ?').get(from!.id) as {
      network_id: string;
    };
    const now = Date.now();
    sqlite
      .prepare(
        'insert into ssh_checks (token_hash, network_id, src_device_id, dst_device_id, local_user, period_ms, created_at, expires_at) values (?, ?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        createHash('sha256').update(token).digest('hex'),
        network_id,
        from!.id,
        to!.id,
        'root',
        43_200_000,
        now,
        now + 600_000,
      );
    sqlite.close();
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    await page.goto(`/ssh-check/${token}`);
    await page.getByRole('heading', { name: 'Confirm an SSH session' }).waitFor();
    await page
      .getByRole('definition')
      .filter({ hasText: /^ssh-from$/ })
      .waitFor();
    await page
      .getByRole('definition')
      .filter({ hasText: /^12 h$/ })
      .waitFor();
    await page.getByRole('button', { name: 'Confirm SSH to ssh-to' }).click();
    await page.getByText('The SSH session is confirmed.').waitFor();
    expect(problems).toEqual([]);
    await context.close();
  });

  it('does the same for a Tailscale SSH check URL, whose page says when it is unknown', async () => {
    const context = await browser.newContext({ baseURL: warren.url });
    const page = await context.newPage();
    const checkPath = `/ssh-check/${'x'.repeat(43)}`;
    await page.goto(checkPath);
    await page.getByRole('heading', { name: 'Sign in to Warren' }).waitFor();
    await page.getByText('An SSH session is waiting for you to confirm it.').waitFor();
    await page.goto(warren.signInLink(OWNER));
    await page.waitForURL(`${warren.url}${checkPath}`);
    await page.getByRole('heading', { name: 'Confirm an SSH session' }).waitFor();
    await page.getByText('This SSH check URL is not known.').waitFor();
    await context.close();
  });
});

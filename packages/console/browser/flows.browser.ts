/**
 * Whole tasks in Chromium against a real server: one done with the keyboard alone (sign in,
 * create and copy an auth key, open a device), bulk deletion of devices behind a
 * confirmation, the device's tags editor offering the policy's tagOwners, and the results of
 * the policy's own tests in the editor.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, enroll, launch, signedIn, startWarren, type Warren } from './harness.ts';
import { expectEveryControlReachable, tabTo } from './keyboard.ts';

const OWNER = 'admin@example.com';

describe('tasks in the web console', () => {
  let warren: Warren;
  let browser: Browser;

  beforeAll(async () => {
    buildConsole();
    warren = await startWarren();
    browser = await launch();
    await warren.call('PUT', '/v1/acl', {
      tagOwners: { 'tag:web': [OWNER], 'tag:db': [OWNER] },
      acls: [{ action: 'accept', src: ['*'], dst: ['tag:web:443'] }],
    });
    await enroll(warren, ['web-1'], { tags: ['tag:web'] });
  });
  afterAll(async () => {
    await browser?.close();
    await warren?.stop();
  });

  it('signs in, creates and copies an auth key, and opens a device, with the keyboard alone', async () => {
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    // No mouse from here on: every step is Tab, Shift+Tab, Enter, Space or an arrow.
    await page.getByRole('link', { name: 'web-1' }).waitFor();
    await expectEveryControlReachable(page);

    await tabTo(page, 'Keys');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    expect(await page.getByRole('link', { name: 'Keys' }).getAttribute('aria-current')).toBe('page');
    // The new page has the focus: the next Tab starts in its content, not back in the navigation.
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('main');
    await page.getByRole('button', { name: 'New key' }).waitFor();
    await tabTo(page, 'New key');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Create key' }).waitFor();
    await expectEveryControlReachable(page);

    // Arrows move within the key type's radio group, and back.
    await tabTo(page, /Auth key/);
    await page.keyboard.press('ArrowDown');
    await page.getByLabel('Name').waitFor();
    await page.keyboard.press('ArrowUp');
    await page.getByLabel('Tags').waitFor();

    await tabTo(page, /^Tags/);
    await page.keyboard.type('tag:web');
    await tabTo(page, 'Reusable');
    await page.keyboard.press('Space');
    expect(await page.getByLabel('Reusable').isChecked()).toBe(true);
    await tabTo(page, 'Create key');
    await page.keyboard.press('Enter');
    const secret = await page.getByTestId('secret').textContent();
    expect(secret).toMatch(/^wrn_auth_/);
    await tabTo(page, 'Copy the secret', { back: true });
    await page.keyboard.press('Enter');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await tabTo(page, 'I have stored it');
    await page.keyboard.press('Enter');
    await page.getByTestId('secret').waitFor({ state: 'detached' });
    const keys = await warren.call('GET', '/v1/keys?type=auth');
    expect(keys.keys.some((k: { reusable: boolean; tags: string[] }) => k.reusable && k.tags[0] === 'tag:web')).toBe(
      true,
    );

    await tabTo(page, 'Devices', { back: true, max: 120 });
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Devices', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'web-1' }).waitFor();
    await tabTo(page, 'web-1');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Addresses' }).waitFor();
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('web-1');
    await expectEveryControlReachable(page);
    expect(problems).toEqual([]);
    await context.close();
  });

  it('deletes the selected devices only once the confirmation is accepted', async () => {
    await enroll(warren, ['tmp-1', 'tmp-2', 'keep-1']);
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.getByRole('link', { name: 'tmp-1' }).waitFor();
    await page.getByLabel('Select tmp-1').check();
    await page.getByLabel('Select tmp-2').check();
    const remove = page.getByRole('button', { name: 'Delete 2 selected' });

    const dialogs: string[] = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      return dialog.dismiss();
    });
    await remove.click();
    expect(dialogs).toEqual(['Delete 2 device(s)? They lose access until enrolled again.']);
    expect(await page.getByLabel('Select tmp-1').isChecked()).toBe(true);
    const names = async () =>
      ((await warren.call('GET', '/v1/devices')).devices as { name: string }[]).map((d) => d.name).sort();
    expect(await names()).toEqual(['keep-1', 'tmp-1', 'tmp-2', 'web-1']);

    page.once('dialog', (dialog) => dialog.accept());
    await remove.click();
    await page.getByRole('link', { name: 'tmp-1' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'tmp-2' }).waitFor({ state: 'detached' });
    await page.getByRole('link', { name: 'keep-1' }).waitFor();
    expect(await names()).toEqual(['keep-1', 'web-1']);
    expect(await page.getByRole('button', { name: /selected$/ }).count()).toBe(0);
    await context.close();
  });

  it("edits a device's tags from the policy's tagOwners, and the list shows them", async () => {
    const [db] = await enroll(warren, ['db-1']);
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto(`/devices/${db.id}`);
    await page.getByText('No tags: the device acts as its user.').waitFor();
    const input = page.getByLabel('Add a tag');
    await page.waitForFunction(() => document.querySelectorAll('#tag-owners option').length > 0);
    const offered = await page
      .locator('#tag-owners option')
      .evaluateAll((o) => o.map((x) => (x as HTMLOptionElement).value));
    expect(offered.sort()).toEqual(['tag:db', 'tag:web']);
    expect(await input.getAttribute('list')).toBe('tag-owners');

    await input.fill('tag:db');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('button', { name: 'Remove tag:db' }).waitFor();
    expect((await warren.call('GET', `/v1/devices/${db.id}`)).tags).toEqual(['tag:db']);

    // A tag the policy does not define is refused and changes nothing.
    await input.fill('tag:nope');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('alert').waitFor();
    expect((await warren.call('GET', `/v1/devices/${db.id}`)).tags).toEqual(['tag:db']);

    await page.getByRole('link', { name: '← Devices' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'db-1', exact: true }) });
    await row.getByText('tag:db').waitFor();
    await page.getByRole('link', { name: 'db-1', exact: true }).click();
    await page.getByRole('button', { name: 'Remove tag:db' }).click();
    await page.getByText('No tags: the device acts as its user.').waitFor();
    expect((await warren.call('GET', `/v1/devices/${db.id}`)).tags).toEqual([]);
    await context.close();
  });

  it("lists the policy's tests as passed or failed, and a click puts the cursor on the test's line", async () => {
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    await page.goto('/policy');
    const editor = page.getByLabel('Policy (HuJSON)');
    await editor.waitFor();
    const text = `{
  "tagOwners": { "tag:web": ["${OWNER}"], "tag:db": ["${OWNER}"] },
  "acls": [
    { "action": "accept", "src": ["*"], "dst": ["tag:web:443"] }
  ],
  "tests": [
    { "src": "tag:db", "accept": ["tag:web:443"] },
    { "src": "tag:db", "accept": ["tag:web:22"] }
  ]
}
`;
    await editor.click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('Delete');
    await page.evaluate((t) => navigator.clipboard.writeText(t), text);
    await page.keyboard.press('ControlOrMeta+v');
    const tests = page.getByRole('list', { name: 'Policy tests' });
    await tests.waitFor();
    await page.getByText('1 of 2 tests fail.').waitFor();
    const items = tests.locator(':scope > li');
    expect(await items.count()).toBe(2);
    expect(await items.nth(0).getByRole('button').first().textContent()).toBe('passed Line 7: tag:db');
    expect(await items.nth(1).getByRole('button').first().textContent()).toBe('failed Line 8: tag:db');
    expect(await items.nth(1).locator('.failures li').textContent()).toMatch(
      /^Line 8, column \d+: test: tag:db -> tag:web:22 expected accept/,
    );
    await items.nth(1).getByRole('button').first().click();
    expect(await page.locator('.cm-lineNumbers .cm-activeLineGutter').textContent()).toBe('8');
    await items.nth(0).getByRole('button').first().click();
    expect(await page.locator('.cm-lineNumbers .cm-activeLineGutter').textContent()).toBe('7');
    expect(problems).toEqual([]);
    await context.close();
  });
});

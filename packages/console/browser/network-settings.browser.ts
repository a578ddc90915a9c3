/**
 * The network's device, DNS and relay settings on the Network page, in Chromium against a real
 * server: an owner changes them (each section one PATCH with the fields changed in it only, so
 * a change someone else made meanwhile to another field survives) and the API shows the change; a refused value shows the server's problem and changes nothing; a read-only
 * role reads the same values with no control to change them.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axe, buildConsole, launch, signedIn, startWarren, type Warren, WIDTHS } from './harness.ts';
import { expectEveryControlReachable, tabTo } from './keyboard.ts';

const OWNER = 'admin@example.com';

/** The bodies of the PATCH /v1/network calls the page makes. */
function patches(page: Page): unknown[] {
  const bodies: unknown[] = [];
  page.on('request', (r) => {
    if (r.method() === 'PATCH' && new URL(r.url()).pathname === '/v1/network') bodies.push(r.postDataJSON());
  });
  return bodies;
}

describe('the network settings in the console', () => {
  let warren: Warren;
  let browser: Browser;

  beforeAll(async () => {
    buildConsole();
    warren = await startWarren();
    browser = await launch();
    await warren.call('POST', '/v1/users', { loginName: 'audra@example.com', role: 'auditor' });
    await warren.call('POST', '/v1/users', { loginName: 'nia@example.com', role: 'network-admin' });
  });
  afterAll(async () => {
    await browser?.close();
    await warren?.stop();
  });

  it('lets an owner turn device approval on and set nameservers, split DNS and an extra record', async () => {
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    const sent = patches(page);
    await page.goto('/network');
    const devices = page.getByRole('form', { name: 'Devices' });
    await devices.getByLabel('Approve new devices before they join').check();
    await devices.getByLabel('Node key expiry').fill('90d');
    await devices.getByRole('button', { name: 'Save device settings' }).click();
    await devices.getByRole('status').getByText('Saved').waitFor();

    const dns = page.getByRole('form', { name: 'DNS' });
    expect(await dns.getByLabel('DNS domain').inputValue()).toBe('default.warren.internal');
    await dns.getByText('Empty: the default, default.warren.internal.').waitFor();
    await dns.getByLabel('Nameservers', { exact: true }).fill('1.1.1.1 9.9.9.9');
    await dns.getByRole('button', { name: 'Add a split DNS domain' }).click();
    await dns.getByLabel('Domain of split DNS route 1').fill('corp.example');
    await dns.getByLabel('Nameservers of split DNS route 1').fill('10.0.0.53');
    await dns.getByRole('button', { name: 'Add a split DNS domain' }).click();
    await dns.getByLabel('Domain of split DNS route 2').fill('home.arpa');
    await dns.getByRole('button', { name: 'Add a record' }).click();
    await dns.getByLabel('Name of record 1').fill('db.corp.example');
    await dns.getByLabel('Value of record 1').fill('10.0.0.7');
    await dns.getByRole('button', { name: 'Add a record' }).click();
    await dns.getByLabel('Name of record 2').fill('db.corp.example');
    await dns.getByLabel('Type of record 2').selectOption('AAAA');
    await dns.getByLabel('Value of record 2').fill('fd00::7');
    await dns.getByRole('button', { name: 'Save DNS settings' }).click();
    await dns.getByRole('status').getByText('Saved').waitFor();

    const network = await warren.call('GET', '/v1/network');
    expect(network.deviceApproval).toBe(true);
    expect(network.nodeKeyExpiry).toBe('90d');
    expect(network.dns).toEqual({
      domain: 'default.warren.internal',
      magicDns: true,
      nameservers: ['1.1.1.1', '9.9.9.9'],
      searchDomains: [],
      splitDns: { 'corp.example': ['10.0.0.53'], 'home.arpa': [] },
      extraRecords: [
        { name: 'db.corp.example', type: 'A', value: '10.0.0.7' },
        { name: 'db.corp.example', type: 'AAAA', value: 'fd00::7' },
      ],
    });
    // Each section sent the fields changed in it only; the unchanged default domain was not written out.
    const { nameservers, splitDns, extraRecords } = network.dns;
    expect(sent).toEqual([
      { deviceApproval: true, nodeKeyExpiry: '90d' },
      { dns: { nameservers, splitDns, extraRecords } },
    ]);

    // A row removed is gone from the next save; a reload shows what is stored.
    await dns.getByRole('button', { name: 'Remove split DNS route 2' }).click();
    await dns.getByRole('button', { name: 'Save DNS settings' }).click();
    await dns.getByRole('status').getByText('Saved').waitFor();
    expect((await warren.call('GET', '/v1/network')).dns.splitDns).toEqual({ 'corp.example': ['10.0.0.53'] });
    await page.reload();
    expect(await page.getByLabel('Approve new devices before they join').isChecked()).toBe(true);
    expect(await page.getByLabel('Domain of split DNS route 1').inputValue()).toBe('corp.example');
    expect(await page.getByLabel('Nameservers of split DNS route 1').inputValue()).toBe('10.0.0.53');
    expect(await page.getByLabel('Domain of split DNS route 2').count()).toBe(0);
    expect(await page.getByLabel('Type of record 2').inputValue()).toBe('AAAA');
    expect(problems).toEqual([]);
    await context.close();
  });

  it('adds and removes a record with the keyboard alone, the focus following the rows', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/network');
    await page.getByLabel('Domain of split DNS route 1').waitFor();
    await expectEveryControlReachable(page);
    await tabTo(page, 'Add a record');
    await page.keyboard.press('Enter');
    // The new row's first control has the focus.
    await page.keyboard.type('web.corp.example');
    expect(await page.getByLabel('Name of record 3').inputValue()).toBe('web.corp.example');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('10.0.0.8');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter'); // Remove record 3
    expect(await page.getByLabel('Name of record 3').count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Add a record');
    await context.close();
  });

  for (const viewport of Object.values(WIDTHS)) {
    it(`passes axe with split DNS and record rows at ${viewport.width} px, with nothing scrolling sideways`, async () => {
      const { context, page } = await signedIn(browser, warren, OWNER, viewport);
      await page.goto('/network');
      await page.getByLabel('Domain of split DNS route 1').waitFor();
      expect(await axe(page)).toEqual([]);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow).toBeLessThanOrEqual(0);
      await context.close();
    });
  }

  it("shows the server's problem beside the form for a bad value, and changes nothing", async () => {
    const before = await warren.call('GET', '/v1/network');
    const { context, page } = await signedIn(browser, warren, OWNER);
    const sent = patches(page);
    await page.goto('/network');
    const dns = page.getByRole('form', { name: 'DNS' });
    await dns.getByLabel('Nameservers', { exact: true }).fill('1.1.1.1 not-an-ip');
    await dns.getByRole('button', { name: 'Save DNS settings' }).click();
    await dns
      .getByRole('alert')
      .getByText('dns.nameservers: "not-an-ip" is not an IP address (invalid_request)')
      .waitFor();

    const devices = page.getByRole('form', { name: 'Devices' });
    await devices.getByLabel('Node key expiry').fill('forever');
    await devices.getByRole('button', { name: 'Save device settings' }).click();
    await devices.getByRole('alert').getByText('(invalid_duration)', { exact: false }).waitFor();

    // Regions that do not read as JSON are never sent; ones the server refuses show its reason.
    const relays = page.getByRole('form', { name: 'Relays' });
    await relays.getByLabel('Custom regions (JSON)').fill('[{"RegionID": 1,');
    await relays.getByRole('button', { name: 'Save relay settings' }).click();
    await relays.getByRole('alert').getByText('Custom regions are not valid JSON', { exact: false }).waitFor();
    expect(sent).toHaveLength(2);
    await relays
      .getByLabel('Custom regions (JSON)')
      .fill(
        JSON.stringify([
          { RegionID: 900, RegionCode: 'own', Nodes: [{ Name: '1', RegionID: 900, HostName: 'd.example' }] },
        ]),
      );
    await relays.getByRole('button', { name: 'Save relay settings' }).click();
    await relays.getByRole('alert').getByText("RegionID 900 is the embedded relay's", { exact: false }).waitFor();

    expect(await warren.call('GET', '/v1/network')).toEqual(before);
    await context.close();
  });

  it('lets an owner set custom relay regions from their JSON', async () => {
    const { context, page } = await signedIn(browser, warren, OWNER);
    await page.goto('/network');
    const relays = page.getByRole('form', { name: 'Relays' });
    const regions = [
      {
        RegionID: 901,
        RegionCode: 'fra',
        RegionName: 'Frankfurt',
        Nodes: [{ Name: '901a', RegionID: 901, HostName: 'derp.example.com', DERPPort: 443 }],
      },
    ];
    await relays.getByLabel('Embedded relay in the DERP map').uncheck();
    await relays.getByLabel('Custom regions (JSON)').fill(JSON.stringify(regions));
    await relays.getByRole('button', { name: 'Save relay settings' }).click();
    await relays.getByRole('status').getByText('Saved').waitFor();
    expect((await warren.call('GET', '/v1/network')).derp).toEqual({ embedded: false, regions });
    await context.close();
  });

  for (const [login, role] of [
    ['audra@example.com', 'auditor'],
    ['nia@example.com', 'network-admin'],
  ] as const) {
    it(`shows ${role} the settings with no control to change them`, async () => {
      const { context, page } = await signedIn(browser, warren, login);
      await page.goto('/network');
      await page.getByRole('heading', { name: 'Relays' }).waitFor();
      // biome-ignore lint/performance/useDomNodeTextContent: the text as shown, a term apart from its value
      const text = await page.locator('main').innerText();
      expect(text).toMatch(/Device approval\s+on: new devices wait until approved/);
      expect(text).toMatch(/Node key expiry\s+90d/);
      expect(text).toMatch(/DNS domain\s+default\.warren\.internal \(the default\)/);
      expect(text).toMatch(/Nameservers\s+1\.1\.1\.1, 9\.9\.9\.9/);
      expect(text).toContain('corp.example → 10.0.0.53');
      expect(text).toContain('db.corp.example A 10.0.0.7');
      expect(text).toContain('db.corp.example AAAA fd00::7');
      expect(text).toMatch(/Embedded relay\s+not in the DERP map/);
      expect(text).toContain('901 fra (Frankfurt): derp.example.com');
      expect(
        await page
          .getByRole('button')
          .filter({ hasText: /save|add|remove/i })
          .count(),
      ).toBe(0);
      expect(await page.locator('main').getByRole('textbox').count()).toBe(0);
      expect(await page.locator('main').getByRole('checkbox').count()).toBe(0);
      await context.close();
    });
  }
  // Last, as it changes values the read-only views above check.
  it("sends only the fields changed, so someone else's change to the same section survives, and shows the server's answer", async () => {
    const { context, page, problems } = await signedIn(browser, warren, OWNER);
    const sent = patches(page);
    await page.goto('/network');
    const dns = page.getByRole('form', { name: 'DNS' });
    const devices = page.getByRole('form', { name: 'Devices' });
    await dns.getByLabel('Search domains').waitFor();
    const loaded = await warren.call('GET', '/v1/network');

    // Someone else changes other fields of both sections while the page is open.
    await warren.call('PATCH', '/v1/network', {
      flowLogs: true,
      dns: { searchDomains: ['corp.example'], splitDns: { ...loaded.dns.splitDns, 'lab.example': ['10.0.1.53'] } },
    });
    await dns.getByLabel('Nameservers', { exact: true }).fill('8.8.8.8');
    await dns.getByRole('button', { name: 'Save DNS settings' }).click();
    await dns.getByRole('status').getByText('Saved').waitFor();
    await devices.getByLabel('Node key expiry').fill('30d');
    await devices.getByRole('button', { name: 'Save device settings' }).click();
    await devices.getByRole('status').getByText('Saved').waitFor();

    const stored = await warren.call('GET', '/v1/network');
    expect(stored).toMatchObject({ flowLogs: true, nodeKeyExpiry: '30d', deviceApproval: loaded.deviceApproval });
    expect(stored.dns).toMatchObject({
      nameservers: ['8.8.8.8'],
      searchDomains: ['corp.example'],
      splitDns: { ...loaded.dns.splitDns, 'lab.example': ['10.0.1.53'] },
    });

    // The page sent only what was changed in it.
    expect(sent).toEqual([{ dns: { nameservers: ['8.8.8.8'] } }, { nodeKeyExpiry: '30d' }]);

    // Each form now shows what the server answered, the other change included, with no reload,
    // and the focus is still on the button that saved.
    expect(await dns.getByLabel('Search domains').inputValue()).toBe('corp.example');
    const routes = Object.keys(stored.dns.splitDns).length;
    expect(await dns.getByLabel(`Domain of split DNS route ${routes}`).inputValue()).toBe('lab.example');
    expect(await devices.getByLabel('Log network flows').isChecked()).toBe(true);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Save device settings');

    // A save with nothing changed writes nothing.
    const relays = page.getByRole('form', { name: 'Relays' });
    await relays.getByRole('button', { name: 'Save relay settings' }).click();
    await relays.getByRole('status').getByText('Nothing changed').waitFor();
    expect(sent).toHaveLength(2);
    expect(problems).toEqual([]);
    await context.close();
  });
});

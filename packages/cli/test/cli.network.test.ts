/**
 * `warren network` and `warren network set`: the settings of PATCH /v1/network from the command
 * line, read back through the API of a real server.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARREN_FROM_SOURCES } from './bin.js';
import { envOf, warren } from './run.js';

/** Nothing listens here: a command that reached for a server would exit 1, not 2. */
const NOWHERE = { WARREN_URL: 'http://127.0.0.1:9', WARREN_API_KEY: `wrn_api_${'x'.repeat(40)}` };

const region = (id: number) => ({
  RegionID: id,
  RegionCode: `r${id}`,
  RegionName: `Region ${id}`,
  Nodes: [{ Name: `${id}a`, RegionID: id, HostName: `derp${id}.example.com`, DERPPort: 443, STUNPort: 3478 }],
});

describe('warren network set', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let dir: string;
  const settings = async () => json(await server.call('GET', '/v1/network'));
  const set = (...flags: string[]) => warren(['network', 'set', ...flags], env);
  beforeAll(async () => {
    server = await startServer();
    env = envOf(server);
    dir = await mkdtemp(join(tmpdir(), 'warren-cli-network-'));
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('warren network shows the settings at their defaults', async () => {
    const res = await warren(['network'], env);
    expect(res.code).toBe(0);
    for (const line of [
      /^device approval +off$/m,
      /^node key expiry +180d$/m,
      /^flow logs +off$/m,
      /^DNS domain +test\.warren\.internal$/m,
      /^MagicDNS +on$/m,
      /^nameservers +-$/m,
      /^search domains +-$/m,
      /^split DNS +-$/m,
      /^extra records +-$/m,
      /^embedded relay +on$/m,
      /^DERP regions +0$/m,
    ]) {
      expect(res.stdout).toMatch(line);
    }
  });

  it('sets device approval, node key expiry, flow logs, MagicDNS and the embedded relay, sending only those', async () => {
    const before = await settings();
    const res = await set('--device-approval', '--node-key-expiry', '90d', '--flow-logs', '--no-magic-dns');
    expect(res.code, res.stderr).toBe(0);
    const after = await settings();
    expect(after).toEqual({
      ...before,
      deviceApproval: true,
      nodeKeyExpiry: '90d',
      flowLogs: true,
      dns: { ...before.dns, magicDns: false },
    });
    // It prints the resulting settings as `warren network` does.
    expect(res.stdout).toBe((await warren(['network'], env)).stdout);
    expect(res.stdout).toMatch(/^device approval +on$/m);
    expect(res.stdout).toMatch(/^node key expiry +90d$/m);

    const back = await set(
      '--no-device-approval',
      '--node-key-expiry',
      '0',
      '--no-flow-logs',
      '--magic-dns',
      '--no-derp-embedded',
    );
    expect(back.code, back.stderr).toBe(0);
    expect(await settings()).toMatchObject({
      deviceApproval: false,
      nodeKeyExpiry: '0',
      flowLogs: false,
      dns: { magicDns: true },
      derp: { embedded: false },
    });
    expect(back.stdout).toMatch(/^node key expiry +never$/m);
    expect(back.stdout).toMatch(/^embedded relay +off$/m);
    expect((await set('--derp-embedded')).code).toBe(0);
    expect((await settings()).derp.embedded).toBe(true);
  });

  it('sets the DNS domain, nameservers, search domains, split DNS and extra records; --json prints the API body', async () => {
    const res = await set(
      '--dns-domain',
      'corp.example',
      '--nameserver',
      '1.1.1.1',
      '--nameserver',
      '2606:4700:4700::1111',
      '--search-domain',
      'lab.example',
      '--split-dns',
      'ad.example=10.0.0.53,10.0.0.54',
      '--split-dns',
      'lab.example=',
      '--extra-record',
      'db.lab.example=10.0.0.5',
      '--extra-record',
      'db.lab.example=fd00::5',
      '--json',
    );
    expect(res.code, res.stderr).toBe(0);
    const after = await settings();
    expect(JSON.parse(res.stdout)).toEqual(after);
    expect(after.dns).toEqual({
      domain: 'corp.example',
      magicDns: true,
      nameservers: ['1.1.1.1', '2606:4700:4700::1111'],
      searchDomains: ['lab.example'],
      splitDns: { 'ad.example': ['10.0.0.53', '10.0.0.54'], 'lab.example': [] },
      extraRecords: [
        { name: 'db.lab.example', type: 'A', value: '10.0.0.5' },
        { name: 'db.lab.example', type: 'AAAA', value: 'fd00::5' },
      ],
    });

    const shown = (await warren(['network'], env)).stdout;
    expect(shown).toMatch(/^DNS domain +corp\.example$/m);
    expect(shown).toMatch(/^nameservers +1\.1\.1\.1 2606:4700:4700::1111$/m);
    expect(shown).toMatch(/^search domains +lab\.example$/m);
    expect(shown).toMatch(
      /^split DNS +ad\.example → 10\.0\.0\.53 10\.0\.0\.54\n +lab\.example → \(answered by the clients, none forwarded\)$/m,
    );
    expect(shown).toMatch(/^extra records +db\.lab\.example A 10\.0\.0\.5\n +db\.lab\.example AAAA fd00::5$/m);

    // A repeated flag replaces the whole list or map, as the API does.
    expect((await set('--split-dns', 'other.example=10.0.0.1')).code).toBe(0);
    expect((await settings()).dns.splitDns).toEqual({ 'other.example': ['10.0.0.1'] });

    const cleared = await set(
      '--dns-domain-default',
      '--no-nameservers',
      '--no-search-domains',
      '--no-split-dns',
      '--no-extra-records',
    );
    expect(cleared.code, cleared.stderr).toBe(0);
    expect((await settings()).dns).toEqual({
      domain: 'test.warren.internal',
      magicDns: true,
      nameservers: [],
      searchDomains: [],
      splitDns: {},
      extraRecords: [],
    });
  });

  it('sets the DERP regions from a file, and clears them with an empty array', async () => {
    const file = join(dir, 'regions.json');
    await writeFile(file, JSON.stringify([region(1), region(2)]));
    const res = await set('--derp-regions', file);
    expect(res.code, res.stderr).toBe(0);
    expect((await settings()).derp.regions.map((r: { RegionID: number }) => r.RegionID)).toEqual([1, 2]);
    expect(res.stdout).toMatch(/^DERP regions +2$/m);
    await writeFile(file, '[]');
    expect((await set('--derp-regions', file)).code).toBe(0);
    expect((await settings()).derp.regions).toEqual([]);

    // `-` reads the array from stdin, as a pipe from another program gives it.
    const piped = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = execFile(
        process.execPath,
        [...WARREN_FROM_SOURCES, 'network', 'set', '--derp-regions', '-'],
        { env: { ...process.env, ...env } },
        (error, _stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stderr }),
      );
      child.stdin?.end(JSON.stringify([region(7)]));
    });
    expect(piped, piped.stderr).toEqual({ code: 0, stderr: '' });
    expect((await settings()).derp.regions).toEqual([region(7)]);
  });

  it('a value the server refuses changes nothing and exits 1 with its problem', async () => {
    const before = await settings();
    const nameserver = await set('--flow-logs', '--nameserver', 'not-an-address');
    expect(nameserver.code).toBe(1);
    expect(nameserver.stdout).toBe('');
    expect(nameserver.stderr).toMatch(/^warren: invalid_request: .*dns\.nameservers/);
    const expiry = await set('--device-approval', '--node-key-expiry', '400d');
    expect(expiry).toMatchObject({ code: 1, stdout: '' });
    expect(expiry.stderr).toMatch(/^warren: invalid_duration: /);
    const record = await set('--extra-record', 'db.lab.example=10.0.0.999');
    expect(record.code).toBe(1);
    expect(record.stderr).toMatch(/^warren: invalid_request: .*dns\.extraRecords\.0\.value/);
    const file = join(dir, 'twice.json');
    await writeFile(file, JSON.stringify([region(3), region(3)]));
    const regions = await set('--derp-regions', file);
    expect(regions.code).toBe(1);
    expect(regions.stderr).toMatch(/^warren: invalid_request: /);
    expect(await settings()).toEqual(before);
  });

  it('malformed flags and no flag at all are refused before any request (exit 2)', async () => {
    const notArray = join(dir, 'object.json');
    await writeFile(notArray, JSON.stringify(region(1)));
    const notJson = join(dir, 'broken.json');
    await writeFile(notJson, '[{');
    const mistakes: [string[], RegExp][] = [
      [[], /^warren: nothing to set: /],
      [['--split-dns', 'corp.example'], /--split-dns must be DOMAIN=IP.*"corp\.example"/],
      [['--split-dns', '=10.0.0.1'], /--split-dns must be DOMAIN=IP.*"=10\.0\.0\.1"/],
      [['--split-dns', 'a.example=1.1.1.1', '--split-dns', 'a.example='], /a\.example is given twice/],
      [['--split-dns', 'a.example=1.1.1.1,,2.2.2.2'], /an empty address/],
      [['--extra-record', 'db.lab.example'], /--extra-record must be NAME=ADDRESS.*"db\.lab\.example"/],
      [['--extra-record', 'db.lab.example='], /--extra-record must be NAME=ADDRESS/],
      [['--node-key-expiry', 'soon'], /--node-key-expiry .*"soon"/],
      [['--device-approval', '--no-device-approval'], /pass --device-approval or --no-device-approval, not both/],
      [['--no-split-dns', '--split-dns', 'a.example=1.1.1.1'], /pass --split-dns or --no-split-dns, not both/],
      [['--nameserver', '1.1.1.1', '--no-nameservers'], /pass --nameserver or --no-nameservers, not both/],
      [['--dns-domain', 'a.example', '--dns-domain-default'], /pass --dns-domain or --dns-domain-default, not both/],
      [['--derp-regions', join(dir, 'missing.json')], /cannot read .*missing\.json: no such file/],
      [['--derp-regions', notArray], /must hold a JSON array/],
      [['--derp-regions', notJson], /is not JSON/],
    ];
    for (const [flags, message] of mistakes) {
      const res = await warren(['network', 'set', ...flags], NOWHERE);
      expect(res.code, `${flags.join(' ')}: ${res.stderr}`).toBe(2);
      expect(res.stdout).toBe('');
      expect(res.stderr).toMatch(message);
      expect(res.stderr.split('\n')).toHaveLength(2);
    }
    // Against the real server too: the valid flag beside the malformed one was not sent either.
    const before = await settings();
    expect((await set('--flow-logs', '--split-dns', 'corp.example')).code).toBe(2);
    expect(await settings()).toEqual(before);
  });
});

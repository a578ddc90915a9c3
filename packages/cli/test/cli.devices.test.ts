import { defineTags, type Enrolled, enroll, json, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

describe('warren devices', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let ci: Enrolled[];
  let laptop: Enrolled;
  beforeAll(async () => {
    server = await startServer();
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:ci']);
    env = envOf(server);
    ci = await enroll(server, ['ci-1', 'ci-2'], { tags: ['tag:ci'] });
    [laptop] = (await enroll(server, ['laptop'], { offline: true })) as [Enrolled];
  });
  afterAll(() => server.close());

  it('lists devices in an aligned table with addresses and owners', async () => {
    const res = await warren(['devices', 'list'], env);
    expect(res.code).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +NAME +ADDRESS +OWNER +OS +STATUS +LAST SEEN$/);
    expect(lines).toHaveLength(4);
    expect(res.stdout).toMatch(
      new RegExp(`^${ci[0]!.id} +ci-1 +100\\.\\d+\\.\\d+\\.\\d+ +tag:ci +linux +online +(just now|\\d+s ago)$`, 'm'),
    );
    expect(res.stdout).toMatch(
      new RegExp(
        `^${laptop.id} +laptop +100\\.\\d+\\.\\d+\\.\\d+ +owner@example\\.com +linux +offline +(just now|\\d+s ago)$`,
        'm',
      ),
    );
    const column = lines[0]!.indexOf('NAME');
    expect(lines.slice(1).every((line) => /^\S/.test(line.slice(column)) && line[column - 1] === ' ')).toBe(true);
  });

  it('filters by tag and online state; --json prints the API body', async () => {
    const online = JSON.parse((await warren(['devices', 'list', '--tag', 'tag:ci', '--online', '--json'], env)).stdout);
    expect(online.devices.map((d: any) => d.name).sort()).toEqual(['ci-1', 'ci-2']);
    expect(online.devices[0]).not.toHaveProperty('addresses');
    const offline = JSON.parse(
      (await warren(['devices', 'list', '--offline', '--json', '--fields', 'all'], env)).stdout,
    );
    expect(offline.devices.map((d: any) => d.name)).toEqual(['laptop']);
    expect(offline.devices[0].addresses).toHaveLength(2);
    const none = await warren(['devices', 'list', '--tag', 'tag:ci', '--offline'], env);
    expect(none).toEqual({ code: 0, stdout: '', stderr: 'no devices match\n' });
    const mine = JSON.parse((await warren(['devices', 'list', '--user', 'owner@example.com', '--json'], env)).stdout);
    expect(mine.devices.map((d: any) => d.name)).toContain('laptop');
  });

  it('shows one device by id or by name', async () => {
    const byId = await warren(['devices', 'get', laptop.id], env);
    expect(byId.code).toBe(0);
    expect(byId.stdout).toMatch(/^hostname +laptop$/m);
    expect(byId.stdout).toMatch(/^addresses +100\.\S+ fd7a:115c:a1e0:\S+$/m);
    const byName = JSON.parse((await warren(['devices', 'get', 'ci-2', '--json'], env)).stdout);
    expect(byName.id).toBe(ci[1]!.id);
    const missing = await warren(['devices', 'get', 'dev_nope'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^warren: not_found: /);
  });

  it('replaces tags, printing the device detail with --json, and clears them when none are given', async () => {
    const tagged = await warren(['devices', 'tag', 'ci-2', 'tag:ci', '--json'], env);
    expect(tagged.code).toBe(0);
    expect(JSON.parse(tagged.stdout)).toEqual(await json(await server.call('GET', `/v1/devices/${ci[1]!.id}`)));
    expect(JSON.parse(tagged.stdout).tags).toEqual(['tag:ci']);
    const res = await warren(['devices', 'tag', ci[1]!.id], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toBe(`${ci[1]!.id} (ci-2) tags: (none)\n`);
    const invalid = await warren(['devices', 'tag', ci[1]!.id, 'ci'], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^warren: invalid_tag: /);
  });

  it('approves a device waiting for approval and expires a login', async () => {
    await server.call('PATCH', '/v1/network', { body: { deviceApproval: true } });
    const [waiting] = (await enroll(server, ['waiting'])) as [Enrolled];
    expect((await warren(['devices', 'get', 'waiting'], env)).stdout).toMatch(/^approved +no, waiting for approval/m);
    const res = await warren(['devices', 'approve', 'waiting'], env);
    expect(res).toEqual({ code: 0, stdout: `approved device ${waiting.id} (waiting)\n`, stderr: '' });
    const again = await warren(['devices', 'approve', waiting.id], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^warren: invalid_state: /);
    const expired = JSON.parse((await warren(['devices', 'expire', 'waiting', '--json'], env)).stdout);
    expect(expired).toMatchObject({ id: waiting.id, authorized: true, keyExpired: true });
    expect((await warren(['devices', 'get', waiting.id], env)).stdout).toMatch(
      /^login expires +expired: must log in again$/m,
    );
    await server.call('PATCH', '/v1/network', { body: { deviceApproval: false } });
  });

  it('set --no-key-expiry keeps a login from expiring, --key-expiry gives the expiry back', async () => {
    const never = await warren(['devices', 'set', 'laptop', '--no-key-expiry'], env);
    expect(never.code).toBe(0);
    expect(never.stdout).toMatch(/^login expires +never$/m);
    const back = await warren(['devices', 'set', laptop.id, '--key-expiry', '--json'], env);
    expect(JSON.parse(back.stdout)).toEqual(await json(await server.call('GET', `/v1/devices/${laptop.id}`)));
    expect(JSON.parse(back.stdout)).toMatchObject({ keyExpiryDisabled: false });
    expect(await warren(['devices', 'set', 'laptop', '--key-expiry', '--no-key-expiry'], env)).toEqual({
      code: 2,
      stdout: '',
      stderr: 'warren: pass --key-expiry or --no-key-expiry, not both\n',
    });
    expect((await warren(['devices', 'set', 'laptop'], env)).code).toBe(2);
  });

  it('deletes a device', async () => {
    const res = await warren(['devices', 'delete', 'ci-1'], env);
    expect(res).toEqual({ code: 0, stdout: `deleted device ${ci[0]!.id}\n`, stderr: '' });
    expect((await warren(['devices', 'get', ci[0]!.id], env)).code).toBe(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTags } from '../../acl/helpers.js';
import {
  auditEntries,
  createAuthKey,
  enroll,
  getDevice,
  heartbeat,
  newNodeKey,
  nodeCall,
  register,
} from '../../devices/helpers.js';
import { json, startServer, type TestServer } from '../../harness.js';

describe('POST /v1/node/register', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:server', 'tag:web', 'tag:a', 'tag:b']);
  });
  afterAll(() => server.close());

  it('enrolls a device with the key’s tags, user and ephemeral flag', async () => {
    const key = await createAuthKey(server, { tags: ['tag:server', 'tag:web'], ephemeral: true });
    const res = await register(server, key.key, {
      hostname: 'db-primary',
      os: 'linux',
      clientVersion: '1.2.3',
    });
    expect(res.status).toBe(201);
    const { device, nodeToken } = await json(res);
    expect(nodeToken).toMatch(/^wrn_node_[0-9A-Za-z]+$/);
    expect(device).toMatchObject({
      name: 'db-primary',
      hostname: 'db-primary',
      os: 'linux',
      online: true,
      tags: ['tag:server', 'tag:web'],
      user: { loginName: 'owner@example.com' },
      clientVersion: '1.2.3',
      keyId: key.id,
      ephemeral: true,
      authorized: true,
      // Tagged: its login does not expire, as in Tailscale (an untagged one's lasts the
      // network's nodeKeyExpiry, 180 days by default: devices/expiry.test.ts).
      keyExpiryDisabled: true,
      keyExpiry: null,
      keyExpired: false,
      routes: [],
    });
    expect(Date.parse(device.expires) - Date.parse(device.created)).toBe(180 * 86_400_000);
    expect(device.id).toMatch(/^dev_/);
    expect(device.user.id).toMatch(/^usr_/);
    expect(device.addresses).toHaveLength(2);
    expect(device.addresses[0]).toMatch(/^100\.(6[4-9]|[7-9][0-9]|1[01][0-9]|12[0-7])\.\d+\.\d+$/);
    expect(device.addresses[1]).toMatch(/^fd7a:115c:a1e0::/);
    expect(device.created).toBe(device.lastSeen);
    expect(Object.keys(device)).not.toContain('nodeKey');
    expect(JSON.stringify(device)).not.toContain('hash');

    // the tags are also in the filter index
    const rows = await server.database.storage.db
      .selectFrom('device_tags')
      .select('tag')
      .where('device_id', '=', device.id)
      .orderBy('tag')
      .execute();
    expect(rows.map((r) => r.tag)).toEqual(['tag:server', 'tag:web']);

    // the node credential works
    expect((await heartbeat(server, nodeToken)).status).toBe(200);
    expect((await getDevice(server, device.id)).body).toEqual({ ...device, lastSeen: device.lastSeen });
  });

  it('counts the key’s uses and marks a single-use key used', async () => {
    const key = await createAuthKey(server);
    await enroll(server, key.key);
    const res = await server.call('GET', `/v1/keys/${key.id}`);
    const body = await json(res);
    expect(body).toMatchObject({ uses: 1, state: 'used' });
    expect(body.lastUsed).not.toBeNull();

    const reusable = await createAuthKey(server, { reusable: true });
    await enroll(server, reusable.key);
    await enroll(server, reusable.key);
    expect(await json(await server.call('GET', `/v1/keys/${reusable.id}`))).toMatchObject({ uses: 2, state: 'valid' });
  });

  it('enrolls devices that arrive together, each its own, and refuses only the call that fails', async () => {
    // Enrollments of one network serialise on its row (and the key's lock on PostgreSQL):
    // every caller gets its own device, and a refused one does not stop those behind it.
    const reusable = await createAuthKey(server, { reusable: true });
    const single = await createAuthKey(server);
    const calls = [
      ...Array.from({ length: 10 }, (_, i) => register(server, reusable.key, { hostname: `burst-${i}` })),
      register(server, single.key, { hostname: 'once-a' }),
      register(server, single.key, { hostname: 'once-b' }),
    ];
    const replies = await Promise.all(calls);
    const enrolled = await Promise.all(replies.filter((r) => r.status === 201).map((r) => json(r)));
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(11).fill(201), 401].sort());
    const names = enrolled.map((e) => e.device.name as string);
    expect(names.filter((n) => n.startsWith('burst-')).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `burst-${i}`).sort(),
    );
    expect(new Set(enrolled.map((e) => e.device.addresses[0])).size).toBe(11);
    expect(new Set(enrolled.map((e) => e.nodeToken)).size).toBe(11);
    for (const e of enrolled) expect((await heartbeat(server, e.nodeToken)).status).toBe(200);
    expect(await json(await server.call('GET', `/v1/keys/${reusable.id}`))).toMatchObject({ uses: 10 });
    expect(await json(await server.call('GET', `/v1/keys/${single.id}`))).toMatchObject({ uses: 1, state: 'used' });
  });

  it('names devices web, web-1, web-2 and makes hostnames DNS labels', async () => {
    const fresh = await startServer();
    const key = await createAuthKey(fresh, { reusable: true });
    const names: string[] = [];
    for (let i = 0; i < 3; i++) names.push((await enroll(fresh, key.key, { hostname: 'Web' })).device.name);
    expect(names).toEqual(['web', 'web-1', 'web-2']);
    expect((await enroll(fresh, key.key, { hostname: 'Build Box_7.corp.example.com' })).device.name).toBe(
      'build-box-7',
    );
    expect((await enroll(fresh, key.key, { hostname: '---' })).device.name).toBe('device');
    // a hostname that is itself a taken name gets its own suffix
    expect((await enroll(fresh, key.key, { hostname: 'web-1' })).device.name).toBe('web-1-1');
    // a freed base name is reused; numbered names keep counting up
    const web = (await fresh.database.storage.db
      .selectFrom('devices')
      .select('id')
      .where('name', '=', 'web')
      .executeTakeFirstOrThrow()) as { id: string };
    expect((await fresh.call('DELETE', `/v1/devices/${web.id}`)).status).toBe(204);
    expect((await enroll(fresh, key.key, { hostname: 'web' })).device.name).toBe('web');
    expect((await enroll(fresh, key.key, { hostname: 'web' })).device.name).toBe('web-3');
    await fresh.close();
  });

  it('gives every device unique addresses that skip .0 and .255', async () => {
    const key = await createAuthKey(server, { reusable: true });
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const { device } = await enroll(server, key.key, { hostname: `n${i}` });
      for (const address of device.addresses) {
        expect(seen.has(address)).toBe(false);
        seen.add(address);
      }
      expect(device.addresses[0]).not.toMatch(/\.(0|255)$/);
    }
  });

  it('re-enrolls a known nodeKey: same id, name and addresses, new credential', async () => {
    const key = await createAuthKey(server, { reusable: true, tags: ['tag:a'] });
    const nodeKey = newNodeKey();
    const first = await enroll(server, key.key, { nodeKey, hostname: 'laptop' });
    // another key of the same owner (same user, same tags): re-enrollment as the contract says
    const other = await createAuthKey(server, { tags: ['tag:a'] });
    const nextIndex = () =>
      server.database.storage.db
        .selectFrom('networks')
        .innerJoin('devices', 'devices.network_id', 'networks.id')
        .select('networks.next_addr_index')
        .where('devices.id', '=', first.device.id)
        .executeTakeFirstOrThrow();
    const before = await nextIndex();
    const second = await enroll(server, other.key, { nodeKey, hostname: 'laptop-renamed', clientVersion: '2.0.0' });
    // Re-enrolling keeps the device's addresses, so it must not use up an address index.
    expect(await nextIndex()).toEqual(before);
    expect(second.device.id).toBe(first.device.id);
    expect(second.device.name).toBe('laptop');
    expect(second.device.hostname).toBe('laptop-renamed');
    expect(second.device.addresses).toEqual(first.device.addresses);
    expect(second.device.tags).toEqual(['tag:a']);
    expect(second.device.keyId).toBe(other.id);
    expect(second.nodeToken).not.toBe(first.nodeToken);
    expect((await heartbeat(server, first.nodeToken)).status).toBe(401);
    expect((await heartbeat(server, second.nodeToken)).status).toBe(200);
    const count = await server.database.storage.db
      .selectFrom('devices')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('node_key', '=', nodeKey)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it('gives the device to the network owner when the key’s user was removed', async () => {
    const created = await server.call('POST', '/v1/users', { body: { loginName: 'gone@example.com' } });
    const user = await json(created);
    const key = await createAuthKey(server, { user: user.id });
    expect((await server.call('DELETE', `/v1/users/${user.id}`)).status).toBe(204);
    const { device } = await enroll(server, key.key);
    expect(device.user.loginName).toBe('owner@example.com');
  });

  it('records device.enroll in the audit log, naming the device', async () => {
    const key = await createAuthKey(server);
    const { device } = await enroll(server, key.key);
    const entries = await auditEntries(server);
    const entry = entries.find((e) => e.action === 'device.enroll' && e.target === device.id);
    expect(entry).toMatchObject({
      method: 'POST',
      path: '/v1/node/register',
      status: 201,
      deviceId: device.id,
      keyId: null,
    });
    expect(JSON.stringify(entries)).not.toContain('wrn_');
  });

  it('answers heartbeat and disconnect only for node credentials', async () => {
    expect((await nodeCall(server, server.apiKey, 'heartbeat')).status).toBe(401);
    const key = await createAuthKey(server);
    expect((await nodeCall(server, key.key, 'disconnect')).status).toBe(401);
  });
});

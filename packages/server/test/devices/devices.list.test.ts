import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTags } from '../acl/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { createAuthKey, enroll, expectProblem, heartbeat, listDevices, nodeCall } from './helpers.js';

describe('GET /v1/devices filters', () => {
  let server: TestServer;
  let ana: { id: string; loginName: string };
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    server = await startServer();
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:web', 'tag:db']);
    ana = await json(await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com' } }));
    const anaWebDb = await createAuthKey(server, { reusable: true, tags: ['tag:web', 'tag:db'], user: ana.id });
    const anaWeb = await createAuthKey(server, { reusable: true, tags: ['tag:web'], user: ana.id });
    const ownerWebDb = await createAuthKey(server, { reusable: true, tags: ['tag:web', 'tag:db'] });
    const plain = await createAuthKey(server, { reusable: true });
    const plan: [string, string][] = [
      ['a1', anaWebDb.key], // ana, web+db, online
      ['a2', anaWebDb.key], // ana, web+db, goes offline
      ['a3', anaWeb.key], // ana, web only
      ['o1', ownerWebDb.key], // owner, web+db
      ['p1', plain.key], // owner, untagged
    ];
    for (const [name, key] of plan) {
      const { device, nodeToken } = await enroll(server, key, { hostname: name });
      ids[name] = device.id;
      tokens[name] = nodeToken;
      server.clock.advance(1000);
    }
    // a2 falls silent, the others keep heartbeating
    server.clock.advance(61_000);
    for (const name of ['a1', 'a3', 'o1', 'p1']) expect((await heartbeat(server, tokens[name]!)).status).toBe(200);
  });
  afterAll(() => server.close());

  const names = async (query: string) => (await listDevices(server, query)).map((d) => d.name);

  it('lists every device in creation order with list records', async () => {
    const devices = await listDevices(server);
    expect(devices.map((d) => d.name)).toEqual(['a1', 'a2', 'a3', 'o1', 'p1']);
    expect(Object.keys(devices[0]).sort()).toEqual(
      [
        'created',
        'hostname',
        'id',
        'lastSeen',
        'name',
        'online',
        'os',
        'tags',
        'user',
        'authorized',
        'keyExpiry',
        'keyExpiryDisabled',
        'keyExpired',
      ].sort(),
    );
    expect(devices[0].user).toEqual({ id: ana.id, loginName: 'ana@example.com' });
  });

  it('filters by one tag, by several (all must match) and by user id or login name', async () => {
    expect(await names('?tag=tag:web')).toEqual(['a1', 'a2', 'a3', 'o1']);
    expect(await names('?tag=tag:web&tag=tag:db')).toEqual(['a1', 'a2', 'o1']);
    expect(await names('?tag=tag:db&tag=tag:nope')).toEqual([]);
    expect(await names(`?user=${ana.id}`)).toEqual(['a1', 'a2', 'a3']);
    expect(await names('?user=ana@example.com')).toEqual(['a1', 'a2', 'a3']);
    expect(await names('?user=nobody@example.com')).toEqual([]);
  });

  it('filters by computed presence', async () => {
    expect(await names('?online=true')).toEqual(['a1', 'a3', 'o1', 'p1']);
    expect(await names('?online=false')).toEqual(['a2']);
  });

  it('combines tag + tag + online + user with AND', async () => {
    expect(await names(`?tag=tag:web&tag=tag:db&online=true&user=${ana.id}`)).toEqual(['a1']);
    expect(await names('?tag=tag:web&tag=tag:db&online=false&user=ana@example.com')).toEqual(['a2']);
    expect(await names('?tag=tag:web&tag=tag:db&online=true')).toEqual(['a1', 'o1']);
  });

  it('returns detail records with routes for fields=all', async () => {
    await nodeCall(server, tokens.o1!, 'heartbeat', { advertiseRoutes: ['10.1.0.0/16'] });
    const devices = await listDevices(server, '?fields=all&tag=tag:db');
    expect(devices.map((d) => d.name)).toEqual(['a1', 'a2', 'o1']);
    const o1 = devices.find((d) => d.name === 'o1');
    expect(o1).toMatchObject({ ephemeral: false, authorized: true, keyId: expect.stringMatching(/^key_/) });
    expect(o1.expires).toBe(o1.keyExpiry);
    expect(o1.addresses).toHaveLength(2);
    expect(o1.routes).toEqual([
      {
        id: expect.stringMatching(/^rt_/),
        prefix: '10.1.0.0/16',
        state: 'pending',
        advertised: true,
        primary: false,
        exitNode: false,
      },
    ]);
    expect(devices.find((d) => d.name === 'a1').routes).toEqual([]);
    expect((await listDevices(server, '?fields=default'))[0]).not.toHaveProperty('addresses');
  });

  it('refuses malformed filters', async () => {
    await expectProblem(await server.call('GET', '/v1/devices?tag=web'), 400, 'invalid_tag');
    await expectProblem(await server.call('GET', '/v1/devices?online=yes'), 400, 'invalid_request');
    await expectProblem(await server.call('GET', '/v1/devices?fields=some'), 400, 'invalid_request');
  });

  it('shows another network nothing', async () => {
    const other = await server.addNetwork();
    expect(await listDevices(server, '', other.apiKey)).toEqual([]);
  });
});

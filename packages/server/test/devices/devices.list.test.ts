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

  it('finds a user by login name however it is capitalised, as creation does', async () => {
    // POST /v1/users stores Ana@Example.com as ana@example.com and refuses it as a duplicate.
    expect(await names('?user=Ana@Example.COM')).toEqual(['a1', 'a2', 'a3']);
    const key = await server.call('POST', '/v1/keys', { body: { user: 'ANA@example.com' } });
    expect(key.status).toBe(201);
    expect((await json(key)).user).toBe(ana.id);
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
    // Tagged: its login does not expire, as in Tailscale.
    expect([o1.keyExpiryDisabled, o1.keyExpiry]).toEqual([true, null]);
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
    // An empty user names nobody: a script whose variable was empty hears so, not "no devices".
    await expectProblem(await server.call('GET', '/v1/devices?user='), 400, 'invalid_request');
  });

  it('shows another network nothing', async () => {
    const other = await server.addNetwork();
    expect(await listDevices(server, '', other.apiKey)).toEqual([]);
    const page = await json(await server.call('GET', '/v1/devices?limit=10&q=a', { key: other.apiKey }));
    expect(page).toEqual({ devices: [], nextCursor: null, hasMore: false, total: 0 });
  });
});

describe('GET /v1/devices in pages, and searched', () => {
  let server: TestServer;
  const names = ['web-3', 'db-1', 'web-1', 'laptop-ana', 'web-2', 'db-2', 'router-1'];
  const devices: Record<string, { id: string; addresses: string[] }> = {};

  beforeAll(async () => {
    server = await startServer();
    await defineTags(server, ['tag:web']);
    const web = await createAuthKey(server, { reusable: true, tags: ['tag:web'] });
    const plain = await createAuthKey(server, { reusable: true });
    for (const name of names) {
      const { device } = await enroll(server, name.startsWith('web') ? web.key : plain.key, { hostname: name });
      devices[name] = device;
    }
  });
  afterAll(() => server.close());

  const page = async (query: string) => {
    const res = await server.call('GET', `/v1/devices?${query}`);
    expect(res.status, await res.clone().text()).toBe(200);
    return json(res);
  };

  it('pages in name order with a cursor, the total counted once per page, nothing lost or repeated', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const body: any = await page(`limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(body.total).toBe(names.length);
      seen.push(...body.devices.map((d: { name: string }) => d.name));
      expect(body.hasMore).toBe(body.nextCursor !== null);
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(seen).toEqual([...names].sort());
    expect(pages).toBe(3);
  });

  it('searches by a part of the name or by an address, with the other filters', async () => {
    const found = async (query: string) => (await page(query)).devices.map((d: { name: string }) => d.name);
    expect(await found('q=web')).toEqual(['web-1', 'web-2', 'web-3']);
    expect(await found('q=WEB-2')).toEqual(['web-2']);
    expect(await found('q=1&tag=tag:web')).toEqual(['web-1']);
    expect(await found(`q=${devices['db-2']!.addresses[0]}`)).toEqual(['db-2']);
    expect(await found(`q=${devices['laptop-ana']!.addresses[1]!.toUpperCase()}`)).toEqual(['laptop-ana']);
    expect(await found('q=100.64.250.250')).toEqual([]);
    expect(await found('q=no%25such_')).toEqual([]);
    const searched = await page('q=db&limit=1');
    expect(searched).toMatchObject({ total: 2, hasMore: true });
    expect(searched.devices[0].name).toBe('db-1');
    expect((await page(`q=db&limit=1&cursor=${searched.nextCursor}`)).devices[0].name).toBe('db-2');
  });

  it('gives detail records with fields=all, each with its routes and addresses', async () => {
    const body = await page('limit=2&fields=all');
    expect(body.devices.map((d: { name: string }) => d.name)).toEqual(['db-1', 'db-2']);
    expect(body.devices[0]).toMatchObject({ addresses: devices['db-1']!.addresses, routes: [], clientVersion: null });
  });

  it('refuses a bad limit, cursor or search', async () => {
    await expectProblem(await server.call('GET', '/v1/devices?limit=0'), 400, 'invalid_request');
    await expectProblem(await server.call('GET', '/v1/devices?limit=1001'), 400, 'invalid_request');
    await expectProblem(await server.call('GET', '/v1/devices?cursor=not-a-cursor!'), 400, 'invalid_request');
    await expectProblem(await server.call('GET', '/v1/devices?q=%20'), 400, 'invalid_request');
    await expectProblem(await server.call('GET', `/v1/devices?q=${'a'.repeat(65)}`), 400, 'invalid_request');
  });
});

/**
 * On SQLite every built-once read keeps its answer until the next commit
 * (storage/compiled-query.ts). Through the API: each small read is read twice (the second
 * answer kept), on this server and on a second instance over the same database, then changed
 * through the API, and both must answer with the change on the very next call. Run on both
 * databases; on PostgreSQL the reads of the network, its single sign-on, its policy and its
 * webhooks are kept per read stamp (migration 032; keys, users, routes and OAuth clients in
 * 033 to 035) and the same must hold, also for a change written to the database by something
 * other than the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, heartbeat, startWithAuthKey } from '../devices/helpers.js';
import { json, type SecondInstance, secondInstance, type TestServer } from '../harness.js';

describe('answers kept until the next commit', () => {
  let server: TestServer;
  let authKey: string;
  let second: SecondInstance;
  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
    second = await secondInstance(server);
  });
  afterAll(async () => {
    await second.close();
    await server.close();
  });

  /** `path` as this server and as the second instance answer it. */
  const read = async (path: string, alone = false): Promise<any[]> => {
    const answers = [await server.call('GET', path), ...(alone ? [] : [await second.get(path)])];
    for (const answer of answers) expect(answer.status).toBe(200);
    return Promise.all(answers.map((answer) => json(answer)));
  };
  /**
   * Reads `path` on both instances twice (so the second answer is the kept one) and checks
   * `before` on it, runs `write`, and checks `after` on the next answer of each. `alone`: this
   * server only (single sign-on needs the public URL the second instance is not given).
   */
  const around = async (
    path: string,
    write: () => Promise<unknown>,
    before: (answer: any) => void,
    after: (answer: any) => void,
    alone = false,
  ) => {
    await read(path, alone);
    for (const answer of await read(path, alone)) before(answer);
    const response = await write();
    if (response instanceof Response) expect(response.status, await response.clone().text()).toBeLessThan(300);
    for (const answer of await read(path, alone)) after(answer);
  };
  const call = (method: string, path: string, body?: unknown) =>
    server.call(method, path, body === undefined ? {} : { body });
  const ids = (list: { id: string }[]) => list.map((item) => item.id);

  it('the network and its single sign-on settings', async () => {
    await around(
      '/v1/network',
      () => call('PATCH', '/v1/network', { flowLogs: true }),
      (network) => expect(network.flowLogs).toBe(false),
      (network) => expect(network.flowLogs).toBe(true),
    );
    const sso = { issuer: 'https://login.example.com', clientSecret: 'not-a-real-secret' };
    await call('PUT', '/v1/network/sso', { ...sso, clientId: 'first' });
    await around(
      '/v1/network/sso',
      () => call('PUT', '/v1/network/sso', { ...sso, clientId: 'second' }),
      (settings) => expect(settings.clientId).toBe('first'),
      (settings) => expect(settings.clientId).toBe('second'),
      true,
    );
  });

  it('the network as /v1/me, /api/v2 and a write outside the API show it', async () => {
    const networks = () => server.database.storage.db.updateTable('networks');
    // As `warren` run against the database, or an operator's SQL, would change it.
    await around(
      '/v1/me',
      () => networks().set({ name: 'renamed' }).execute(),
      (me) => expect(me.network.name).not.toBe('renamed'),
      (me) => expect(me.network.name).toBe('renamed'),
    );
    // The calling key itself, renamed outside the API: /v1/me answers for a kept key's caller.
    const [me] = await read('/v1/me');
    await around(
      '/v1/me',
      () =>
        server.database.storage.db
          .updateTable('keys')
          .set({ name: 'renamed key' })
          .where('id', '=', me.key.id)
          .execute(),
      (answer) => expect(answer.key).toEqual({ id: me.key.id, name: me.key.name }),
      (answer) => expect(answer.key).toEqual({ id: me.key.id, name: 'renamed key' }),
    );
    // Read again: the first call after a commit reads the key's row, the next one finds it kept.
    for (const answer of await read('/v1/me')) expect(answer.key.name).toBe('renamed key');
    await around(
      '/api/v2/tailnet/-/settings',
      () => call('PATCH', '/v1/network', { deviceApproval: true }),
      (settings) => expect(settings.devicesApprovalOn).toBe(false),
      (settings) => expect(settings.devicesApprovalOn).toBe(true),
    );
    await around(
      '/api/v2/tailnet/-/settings',
      () => call('PATCH', '/v1/network', { nodeKeyExpiry: '30d' }),
      (settings) => expect(settings.devicesKeyDurationDays).not.toBe(30),
      (settings) => expect(settings.devicesKeyDurationDays).toBe(30),
    );
    await around(
      '/api/v2/tailnet/-/settings',
      () => networks().set({ flow_logs: 0 }).execute(),
      (settings) => expect(settings.networkFlowLoggingOn).toBe(true),
      (settings) => expect(settings.networkFlowLoggingOn).toBe(false),
    );
    const [{ plan }] = await read('/v1/network');
    const other = plan === 'free' ? 'premium' : 'free';
    await around(
      '/v1/network',
      () => networks().set({ plan: other }).execute(),
      (network) => expect(network.plan).toBe(plan),
      (network) => expect(network.plan).toBe(other),
    );
  });

  it('webhooks', async () => {
    const created = await call('POST', '/v1/webhooks', {
      url: 'https://hooks.example.com/kept',
      events: ['user.deleted'],
      description: 'first',
    });
    expect(created.status).toBe(201);
    const { id } = await json(created);
    await around(
      '/v1/webhooks',
      () => call('PATCH', `/v1/webhooks/${id}`, { description: 'second' }),
      (body) => expect(body.webhooks[0].description).toBe('first'),
      (body) => expect(body.webhooks[0].description).toBe('second'),
    );
    await around(
      `/v1/webhooks/${id}`,
      () => call('PATCH', `/v1/webhooks/${id}`, { enabled: false }),
      (hook) => expect(hook.enabled).toBe(true),
      (hook) => expect(hook.enabled).toBe(false),
    );
    // A deliveries page looks its endpoint up through the kept answer: gone by SQL, it is 404.
    const deliveries = `/v1/webhooks/${id}/deliveries`;
    await read(deliveries);
    await read(deliveries);
    await server.database.storage.db.deleteFrom('webhooks').where('id', '=', id).execute();
    for (const answer of [await server.call('GET', deliveries), await second.get(deliveries)]) {
      expect(answer.status).toBe(404);
    }
  });

  it('keys, on /v1 and /api/v2', async () => {
    const res = await call('POST', '/v1/keys', { type: 'api', name: 'kept', scopes: ['read'] });
    const { id } = await json(res);
    await around(
      `/v1/keys/${id}`,
      () => call('DELETE', `/v1/keys/${id}`),
      (key) => expect(key.state).toBe('valid'),
      (key) => expect(key.state).toBe('revoked'),
    );
    let added = '';
    await around(
      '/v1/keys',
      async () => {
        added = (await createAuthKey(server)).id;
      },
      (body) => expect(ids(body.keys)).not.toContain(added),
      (body) => expect(ids(body.keys)).toContain(added),
    );
    let other = '';
    await around(
      '/api/v2/tailnet/-/keys',
      async () => {
        other = (await createAuthKey(server)).id;
      },
      (body) => expect(body.keys.map((key: { id: string }) => key.id)).not.toContain(other),
      (body) => expect(body.keys.map((key: { id: string }) => key.id)).toContain(other),
    );
    await around(
      `/api/v2/tailnet/-/keys/${other}`,
      () => call('DELETE', `/api/v2/tailnet/-/keys/${other}`),
      (key) => expect(key).toMatchObject({ invalid: false, revoked: null }),
      (key) => expect(key).toMatchObject({ invalid: true, revoked: expect.any(String) }),
    );
    // Nothing is written when a key expires: the kept answer holds only until its expiry. A
    // batch of audit rows commits 50 ms after a call and makes every answer anew, so the reads
    // are made back to back after one.
    const short = await json(
      await call('POST', '/api/v2/tailnet/-/keys', { capabilities: { devices: {} }, expirySeconds: 60 }),
    );
    const path = `/api/v2/tailnet/-/keys/${short.id}`;
    await read(path);
    await Promise.all([server.app.ctx.audit.settled(), second.settled()]);
    for (const key of await read(path)) expect(key.invalid).toBe(false);
    server.clock.advance(61_000);
    for (const key of await read(path)) expect(key.invalid).toBe(true);
  });

  it('keys changed outside the API, and by their own use', async () => {
    const created = await json(await call('POST', '/v1/keys', { type: 'api', name: 'used', scopes: ['read'] }));
    const keys = () => server.database.storage.db.updateTable('keys').where('id', '=', created.id);
    await around(
      `/v1/keys/${created.id}`,
      () => keys().set({ description: 'by hand' }).execute(),
      (key) => expect(key.description).toBe(''),
      (key) => expect(key.description).toBe('by hand'),
    );
    await around(
      '/v1/keys',
      () => keys().set({ description: 'by hand again' }).execute(),
      (body) => expect(JSON.stringify(body)).not.toContain('by hand again'),
      (body) => expect(JSON.stringify(body)).toContain('by hand again'),
    );
    await around(
      `/api/v2/tailnet/-/keys/${created.id}`,
      () => keys().set({ name: 'by hand, once more' }).execute(),
      (key) => expect(key.description).not.toBe('by hand, once more'),
      (key) => expect(key.description).toBe('by hand, once more'),
    );
    await around(
      '/api/v2/tailnet/-/keys',
      () => keys().set({ revoked_at: server.clock.now() }).execute(),
      (body) => expect(ids(body.keys)).toContain(created.id),
      (body) => expect(ids(body.keys)).not.toContain(created.id),
    );
    // A key's first use is written with the audit log's next batch, whichever instance served it.
    const other = await json(await call('POST', '/v1/keys', { type: 'api', name: 'user', scopes: ['read'] }));
    await around(
      `/v1/keys/${other.id}`,
      async () => {
        expect((await server.call('GET', '/v1/network', { key: other.key })).status).toBe(200);
        await server.app.ctx.audit.flush();
      },
      (key) => expect(key).toMatchObject({ uses: 0, lastUsed: null }),
      (key) => expect(key).toMatchObject({ uses: 1, lastUsed: expect.any(String) }),
    );
  });

  it("OAuth clients in /api/v2's key list, changed through it and outside it", async () => {
    const created = await call('POST', '/api/v2/tailnet/-/keys', {
      keyType: 'client',
      scopes: ['all:read'],
      description: 'first',
    });
    expect(created.status, await created.clone().text()).toBe(200);
    const { id } = await json(created);
    const client = (body: { keys: { id: string; description: string }[] }) => body.keys.find((key) => key.id === id);
    const clients = () => server.database.storage.db.updateTable('oauth_clients').where('id', '=', id);
    await around(
      '/api/v2/tailnet/-/keys',
      () => clients().set({ description: 'set by hand' }).execute(),
      (body) => expect(client(body)?.description).toBe('first'),
      (body) => expect(client(body)?.description).toBe('set by hand'),
    );
    await around(
      '/api/v2/tailnet/-/keys',
      () => call('DELETE', `/api/v2/tailnet/-/keys/${id}`),
      (body) => expect(client(body)).toBeDefined(),
      (body) => expect(client(body)).toBeUndefined(),
    );
  });

  it("users changed outside the API, and by their devices' heartbeats", async () => {
    const users = () => server.database.storage.db.updateTable('users');
    await around(
      '/v1/users',
      () => users().set({ display_name: 'Set by hand' }).where('role', '=', 'owner').execute(),
      (body) => expect(JSON.stringify(body)).not.toContain('Set by hand'),
      (body) => expect(JSON.stringify(body)).toContain('Set by hand'),
    );
    // The owner's device: a heartbeat in a later minute moves the owner's last sighting.
    const { device, nodeToken } = await enroll(server, authKey);
    const owner = device.user.id;
    const seen = (body: { users: { id: string; lastSeen: string }[] }) =>
      body.users.find((user) => user.id === owner)!.lastSeen;
    const [before] = await read('/v1/users');
    await around(
      '/v1/users',
      async () => {
        server.clock.advance(61_000);
        expect((await heartbeat(server, nodeToken)).status).toBe(200);
      },
      (body) => expect(seen(body)).toBe(seen(before)),
      (body) => expect(Date.parse(seen(body))).toBe(server.clock.now()),
    );
    await around(
      `/api/v2/users/${owner}`,
      () => users().set({ display_name: 'Set by hand again' }).where('id', '=', owner).execute(),
      (user) => expect(JSON.stringify(user)).not.toContain('Set by hand again'),
      (user) => expect(JSON.stringify(user)).toContain('Set by hand again'),
    );
  });

  it("/api/v2's currentlyConnected: a disconnect, a return, a time-out with nothing written, a deletion", async () => {
    // Past the window of every device enrolled so far (they share the owner), to a minute's
    // first seconds: the owner's kept sighting (its minute) cannot rule the device out below,
    // so only the kept answer's own window can.
    server.clock.advance(61_000);
    server.clock.advance(70_000 - (server.clock.now() % 60_000));
    const { device, nodeToken } = await enroll(server, authKey);
    const owner = device.user.id;
    const inList = (body: { users: { id: string; currentlyConnected: boolean }[] }) =>
      body.users.find((user) => user.id === owner)!.currentlyConnected;
    const byId = (user: { currentlyConnected: boolean }) => user.currentlyConnected;
    const devices = () => server.database.storage.db.updateTable('devices').where('id', '=', device.id);
    // Written outside the API: nothing but the device list stamp tells the second instance.
    await around(
      '/api/v2/tailnet/-/users',
      () => devices().set({ disconnected: 1 }).execute(),
      (body) => expect(inList(body)).toBe(true),
      (body) => expect(inList(body)).toBe(false),
    );
    await around(
      `/api/v2/users/${owner}`,
      async () => expect((await heartbeat(server, nodeToken)).status).toBe(200),
      (user) => expect(byId(user)).toBe(false),
      (user) => expect(byId(user)).toBe(true),
    );
    // The heartbeat's device times out: nothing is written, only the clock moves.
    for (const path of ['/api/v2/tailnet/-/users', `/api/v2/users/${owner}`]) {
      const seenAt = server.clock.now();
      await around(
        path,
        async () => server.clock.advance(60_001 - (server.clock.now() - seenAt)),
        (body) => expect(path.includes('tailnet') ? inList(body) : byId(body)).toBe(true),
        (body) => expect(path.includes('tailnet') ? inList(body) : byId(body)).toBe(false),
      );
      expect((await heartbeat(server, nodeToken)).status).toBe(200);
    }
    await around(
      '/api/v2/tailnet/-/users',
      () => call('DELETE', `/v1/devices/${device.id}`),
      (body) => expect(inList(body)).toBe(true),
      (body) => expect(inList(body)).toBe(false),
    );
  });

  it('users, on /v1 and /api/v2', async () => {
    let id = '';
    await around(
      '/v1/users',
      async () => {
        const res = await call('POST', '/v1/users', { loginName: 'kai@example.com' });
        id = (await json(res.clone())).id;
        return res;
      },
      (body) => expect(body.users).toHaveLength(1),
      (body) => expect(ids(body.users)).toContain(id),
    );
    await around(
      '/api/v2/tailnet/-/users',
      () => call('PATCH', `/v1/users/${id}`, { displayName: 'Kai the first' }),
      (body) => expect(JSON.stringify(body)).not.toContain('Kai the first'),
      (body) => expect(JSON.stringify(body)).toContain('Kai the first'),
    );
    await around(
      `/api/v2/users/${id}`,
      () => call('PATCH', `/v1/users/${id}`, { displayName: 'Kai the second' }),
      (user) => expect(JSON.stringify(user)).toContain('Kai the first'),
      (user) => expect(JSON.stringify(user)).toContain('Kai the second'),
    );
  });

  it('routes and a single device, on /v1 and /api/v2', async () => {
    let deviceId = '';
    await around(
      '/v1/routes',
      async () => {
        deviceId = (await enroll(server, authKey, { advertiseRoutes: ['10.7.0.0/24'] })).device.id;
      },
      (body) => expect(body.routes).toEqual([]),
      (body) => expect(body.routes.map((r: { deviceId: string }) => r.deviceId)).toEqual([deviceId]),
    );
    const [
      {
        routes: [route],
      },
    ] = await read('/v1/routes');
    await around(
      '/v1/routes',
      () => call('POST', `/v1/routes/${route.id}/approve`),
      (body) => expect(body.routes[0].state).toBe('pending'),
      (body) => expect(body.routes[0].state).toBe('approved'),
    );
    await around(
      `/v1/devices/${deviceId}`,
      () => call('PATCH', `/v1/devices/${deviceId}`, { keyExpiryDisabled: true }),
      (device) => expect(device.keyExpiryDisabled).toBe(false),
      (device) => expect(device.keyExpiryDisabled).toBe(true),
    );
    await around(
      `/api/v2/device/${deviceId}`,
      () => call('PATCH', `/v1/devices/${deviceId}`, { keyExpiryDisabled: false }),
      (device) => expect(device.keyExpiryDisabled).toBe(true),
      (device) => expect(device.keyExpiryDisabled).toBe(false),
    );
    await around(
      `/api/v2/device/${deviceId}/routes`,
      () => call('POST', `/v1/routes/${route.id}/disable`),
      (routes) => expect(routes.enabledRoutes).toEqual(['10.7.0.0/24']),
      (routes) => expect(routes.enabledRoutes).toEqual([]),
    );
  });

  it('a device and the routes, changed outside the API and by heartbeats', async () => {
    const { device, nodeToken } = await enroll(server, authKey, { advertiseRoutes: ['10.8.0.0/24'] });
    const db = server.database.storage.db;
    const enrolledAt = server.clock.now();
    await around(
      `/v1/devices/${device.id}`,
      async () => {
        server.clock.advance(5_000);
        expect((await heartbeat(server, nodeToken)).status).toBe(200);
      },
      (body) => expect(Date.parse(body.lastSeen)).toBe(enrolledAt),
      (body) => expect(Date.parse(body.lastSeen)).toBe(server.clock.now()),
    );
    await around(
      `/v1/devices/${device.id}`,
      () => db.updateTable('devices').set({ name: 'named-by-hand' }).where('id', '=', device.id).execute(),
      (body) => expect(body.name).not.toBe('named-by-hand'),
      (body) => expect(body.name).toBe('named-by-hand'),
    );
    const routeOf = (body: { routes: { deviceId: string; state: string }[] }) =>
      body.routes.find((route) => route.deviceId === device.id)!;
    await around(
      '/v1/routes',
      () => db.updateTable('routes').set({ state: 'disabled' }).where('device_id', '=', device.id).execute(),
      (body) => expect(routeOf(body).state).toBe('pending'),
      (body) => expect(routeOf(body).state).toBe('disabled'),
    );
    await around(
      `/api/v2/device/${device.id}/routes`,
      () => db.updateTable('routes').set({ advertised: 0 }).where('device_id', '=', device.id).execute(),
      (body) => expect(body.advertisedRoutes).toEqual(['10.8.0.0/24']),
      (body) => expect(body.advertisedRoutes).toEqual([]),
    );
  });

  it('the policy and its history', async () => {
    const [text] = await Promise.all([server.call('GET', '/v1/acl', { headers: { accept: 'application/hujson' } })]);
    const policy = await text!.text();
    const [
      {
        versions: [head],
      },
    ] = await read('/v1/acl/history');
    await around(
      '/v1/acl/history',
      () =>
        server.call('PUT', '/v1/acl', {
          raw: policy.replace('{', '{\n  // kept\n'),
          headers: { 'content-type': 'application/hujson' },
        }),
      (body) => expect(body.versions[0].version).toBe(head.version),
      (body) => expect(body.versions[0].version).toBe(head.version + 1),
    );
    const next = head.version + 2;
    const put = (comment: string) =>
      server.call('PUT', '/v1/acl', {
        raw: policy.replace('{', `{\n  // ${comment}\n`),
        headers: { 'content-type': 'application/hujson' },
      });
    // A version that does not exist yet: its kept "not found" must not outlive its creation.
    for (let i = 0; i < 2; i++) expect((await server.call('GET', `/v1/acl/history/${next}`)).status).toBe(404);
    for (let i = 0; i < 2; i++) expect((await second.get(`/v1/acl/history/${next}`)).status).toBe(404);
    expect((await put('kept again')).status).toBe(200);
    for (const answer of [
      await server.call('GET', `/v1/acl/history/${next}`),
      await second.get(`/v1/acl/history/${next}`),
    ]) {
      expect(answer.status).toBe(200);
      expect(await answer.text()).toContain('kept again');
    }
    // The current policy, read by its ETag on both instances and both APIs.
    const etags = async () => [
      (await server.call('GET', '/v1/acl')).headers.get('etag'),
      (await second.get('/v1/acl')).headers.get('etag'),
      (await server.call('GET', '/api/v2/tailnet/-/acl')).headers.get('etag'),
      (await second.get('/api/v2/tailnet/-/acl')).headers.get('etag'),
    ];
    await etags();
    const before = await etags();
    expect(new Set(before).size).toBe(1);
    const changed = await put('kept a third time');
    expect(changed.status).toBe(200);
    const after = await etags();
    expect(new Set(after).size).toBe(1);
    expect(after[0]).not.toBe(before[0]);
    expect(after[0]).toBe(changed.headers.get('etag'));
  });
});

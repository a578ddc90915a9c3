import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSecret } from '../../src/lib/secrets.js';
import { setKeyRateLimit } from '../../src/modules/keys/keys.service.js';
import { openStorage } from '../../src/storage/database.js';
import { json, startServer, type TestServer } from '../harness.js';

async function makeKey(server: TestServer, scopes: string[], expiresIn = '1d') {
  const res = await server.call('POST', '/v1/keys', {
    body: { type: 'api', name: `k-${scopes.join('-')}`, scopes, expiresIn },
  });
  expect(res.status).toBe(201);
  return json(res);
}

describe('authentication', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it.each([
    ['no header', null],
    ['garbage', 'hello'],
    ['well-formed but unknown', generateSecret('api')],
    ['an auth key', generateSecret('auth')],
    ['a checksum typo', `${generateSecret('api').slice(0, -1)}x`],
  ])('answers 401 unauthenticated with WWW-Authenticate for %s', async (_label, key) => {
    const res = await server.call('GET', '/v1/devices', { key });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="warren", error="invalid_token"');
    const body = await json(res);
    expect(body).toMatchObject({ type: 'about:blank', title: 'Unauthorized', status: 401, code: 'unauthenticated' });
    expect(body.requestId).toBe(res.headers.get('x-request-id'));
  });

  it('reads the Bearer scheme in any case and with any spaces around the key (RFC 9110 §11.1)', async () => {
    const call = (authorization: string) => fetch(`${server.url}/v1/network`, { headers: { authorization } });
    for (const spelling of ['bearer', 'BEARER', 'BeArEr']) {
      expect((await call(`${spelling} ${server.apiKey}`)).status, spelling).toBe(200);
    }
    expect((await call(`Bearer    ${server.apiKey}`)).status).toBe(200);
    // Fetch trims the value itself; what arrives still ends in the key.
    expect((await call(`  Bearer ${server.apiKey}  `)).status).toBe(200);
    for (const malformed of [server.apiKey, 'Bearer', `Bearer ${server.apiKey} extra`, `Token ${server.apiKey}`]) {
      const res = await call(malformed);
      expect(res.status, malformed).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="warren", error="invalid_token"');
      expect((await json(res)).code).toBe('unauthenticated');
    }
  });

  it('refuses an expired key with key_expired, at once and without a sweeper', async () => {
    const key = await makeKey(server, ['read'], '90s');
    expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
    server.clock.advance(91_000);
    const res = await server.call('GET', '/v1/network', { key: key.key });
    expect(res.status).toBe(401);
    expect((await json(res)).code).toBe('key_expired');
  });

  it('refuses a deleted key with key_revoked on the very next call', async () => {
    const key = await makeKey(server, ['read']);
    expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
    expect((await server.call('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
    const res = await server.call('GET', '/v1/network', { key: key.key });
    expect(res.status).toBe(401);
    expect((await json(res)).code).toBe('key_revoked');
  });

  it('sees a key changed by another process on the same database on the very next call', async () => {
    // What `warren keys set-limit` and an operator's fix do: write the file (or the schema)
    // through a connection of their own, which this server's caches must not outlive.
    const key = await makeKey(server, ['read']);
    const other = await openStorage(server.database.url, { schema: server.database.schema });
    try {
      expect((await server.call('GET', '/v1/network', { key: key.key })).headers.get('ratelimit-limit')).toBe('100000');
      expect(await setKeyRateLimit(other.db, key.id, 7, server.clock.now())).toBe(true);
      expect((await server.call('GET', '/v1/network', { key: key.key })).headers.get('ratelimit-limit')).toBe('7');
      await other.db.updateTable('keys').set({ revoked_at: server.clock.now() }).where('id', '=', key.id).execute();
      const res = await server.call('GET', '/v1/network', { key: key.key });
      expect(res.status).toBe(401);
      expect((await json(res)).code).toBe('key_revoked');
    } finally {
      await other.close();
    }
  });

  it('echoes a sane X-Request-Id and replaces an insane one', async () => {
    const sane = await server.call('GET', '/v1/network', { headers: { 'x-request-id': 'trace-42' } });
    expect(sane.headers.get('x-request-id')).toBe('trace-42');
    const insane = await server.call('GET', '/v1/network', { headers: { 'x-request-id': 'a b<script>' } });
    expect(insane.headers.get('x-request-id')).toMatch(/^req_[0-9a-f]+$/);
  });
});

describe('scopes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('lets a read key GET but not write, naming the scope needed', async () => {
    const read = await makeKey(server, ['read']);
    expect((await server.call('GET', '/v1/keys', { key: read.key })).status).toBe(200);
    expect((await server.call('GET', '/v1/users', { key: read.key })).status).toBe(200);
    const res = await server.call('POST', '/v1/keys', { key: read.key, body: {} });
    expect(res.status).toBe(403);
    expect(await json(res)).toMatchObject({ code: 'insufficient_scope', scope: 'keys' });
  });

  it('lets a resource scope read and write only its resource', async () => {
    const users = await makeKey(server, ['users']);
    expect((await server.call('GET', '/v1/users', { key: users.key })).status).toBe(200);
    expect(
      (await server.call('POST', '/v1/users', { key: users.key, body: { loginName: 'zed@example.com' } })).status,
    ).toBe(201);
    expect((await server.call('GET', '/v1/keys', { key: users.key })).status).toBe(403);
    const keys = await makeKey(server, ['keys']);
    expect((await server.call('POST', '/v1/keys', { key: keys.key, body: {} })).status).toBe(201);
    expect(
      (await server.call('POST', '/v1/users', { key: keys.key, body: { loginName: 'yan@example.com' } })).status,
    ).toBe(403);
  });

  it('lets any valid key read its network', async () => {
    const keys = await makeKey(server, ['keys']);
    expect((await server.call('GET', '/v1/network', { key: keys.key })).status).toBe(200);
  });
});

describe('tenancy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it("never shows another network's keys or users, answering 404 not 403", async () => {
    const other = await server.addNetwork();
    const created = await json(await server.call('POST', '/v1/keys', { body: { description: 'mine' } }));
    const res = await server.call('GET', `/v1/keys/${created.id}`, { key: other.apiKey });
    expect(res.status).toBe(404);
    expect((await json(res)).code).toBe('not_found');
    expect((await server.call('DELETE', `/v1/keys/${created.id}`, { key: other.apiKey })).status).toBe(404);
    const theirs = await json(await server.call('GET', '/v1/keys', { key: other.apiKey }));
    expect(theirs.keys.map((k: { id: string }) => k.id)).not.toContain(created.id);
    const users = await json(await server.call('GET', '/v1/users', { key: other.apiKey }));
    expect(users.users.map((u: { loginName: string }) => u.loginName)).toEqual(['other@example.com']);
    // and the key still works for its owner
    expect((await server.call('GET', `/v1/keys/${created.id}`)).status).toBe(200);
  });
});

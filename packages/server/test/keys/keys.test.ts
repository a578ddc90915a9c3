import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.js';
import { defineTags } from '../acl/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('keys', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:ci']);
  });
  afterAll(() => server.close());

  it('creates a single-use auth key by default, expiring in 90 days, secret shown once', async () => {
    const res = await server.call('POST', '/v1/keys', { body: {} });
    expect(res.status).toBe(201);
    const key = await json(res);
    expect(key).toMatchObject({
      type: 'auth',
      reusable: false,
      ephemeral: false,
      tags: [],
      state: 'valid',
      uses: 0,
      createdBy: 'initial',
    });
    expect(key.key).toMatch(/^wrn_auth_[0-9A-Za-z]{49}$/);
    expect(Date.parse(key.expires) - Date.parse(key.created)).toBe(90 * 86_400_000);
    const owner = (await json(await server.call('GET', '/v1/users'))).users[0];
    expect(key.user).toBe(owner.id);
    // Location names the new key where a GET reads it again (RFC 9110 §15.3.2).
    expect(res.headers.get('location')).toBe(`/v1/keys/${key.id}`);
    const again = await json(await server.call('GET', res.headers.get('location')!));
    expect(again.key).toBeUndefined();
    expect(again.id).toBe(key.id);
  });

  it('stores only the hash of a secret', async () => {
    const key = await json(await server.call('POST', '/v1/keys', { body: { description: 'hash check' } }));
    const row = await server.database.storage.db
      .selectFrom('keys')
      .selectAll()
      .where('id', '=', key.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_hash).toBe(hashSecret(key.key));
    expect(JSON.stringify(row)).not.toContain(key.key);
  });

  it('creates reusable, ephemeral, tagged auth keys for a user named by login', async () => {
    const key = await json(
      await server.call('POST', '/v1/keys', {
        body: {
          reusable: true,
          ephemeral: true,
          tags: ['tag:ci', 'tag:ci'],
          user: 'owner@example.com',
          expiresIn: '24h',
          description: 'ci runners',
        },
      }),
    );
    expect(key).toMatchObject({ reusable: true, ephemeral: true, tags: ['tag:ci'], description: 'ci runners' });
  });

  it.each([
    [{ expiresIn: '10' }, 'invalid_duration'],
    [{ expiresIn: '1w' }, 'invalid_duration'],
    [{ expiresIn: '1.5h' }, 'invalid_duration'],
    [{ expiresIn: '366d' }, 'invalid_duration'],
    [{ expiresIn: '0s' }, 'invalid_duration'],
    [{ expiresIn: `${'9'.repeat(40)}s` }, 'invalid_duration'],
    [{ expiresIn: 86400 }, 'invalid_duration'],
    [{ tags: [`tag:${'a'.repeat(100)}`] }, 'invalid_tag'],
    [{ tags: ['server'] }, 'invalid_tag'],
    [{ tags: ['tag:Bad_Name'] }, 'invalid_tag'],
    [{ reusable: 'yes' }, 'invalid_request'],
    [{ tags: 'tag:a' }, 'invalid_request'],
    [{ user: 'nobody@example.com' }, 'invalid_request'],
    [{ nope: 1 }, 'unknown_field'],
    // Each type of key has its own body: a field of the other type is unknown to it.
    [{ type: 'api', name: 'x', scopes: ['read'], reusable: true }, 'unknown_field'],
    [{ type: 'api', name: 'x', scopes: ['read'], tags: ['tag:ci'] }, 'unknown_field'],
    [{ name: 'x' }, 'unknown_field'],
    [{ type: 'auth', scopes: ['read'] }, 'unknown_field'],
    [{ type: 'api', scopes: ['read'] }, 'invalid_request'],
    [{ type: 'api', name: 'x', scopes: [] }, 'invalid_request'],
    [{ type: 'api', name: 'x', scopes: ['root'] }, 'invalid_request'],
    [{ type: 'bogus' }, 'invalid_request'],
  ])('rejects %j with %s and creates nothing', async (body, code) => {
    const before = (await json(await server.call('GET', '/v1/keys'))).keys.length;
    const res = await server.call('POST', '/v1/keys', { body });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect((await json(res)).code).toBe(code);
    expect((await json(await server.call('GET', '/v1/keys'))).keys.length).toBe(before);
  });

  it('accepts every duration unit', async () => {
    for (const expiresIn of ['90s', '15m', '24h', '89d']) {
      expect((await server.call('POST', '/v1/keys', { body: { expiresIn } })).status).toBe(201);
    }
    // 365d is a valid duration, but this network's key expires in 90 days: a key may not outlive it
    const longer = await server.call('POST', '/v1/keys', { body: { expiresIn: '365d' } });
    expect(longer.status).toBe(403);
    expect((await json(longer)).code).toBe('insufficient_scope');
  });

  it('lets a key mint API keys only within its own scopes and lifetime', async () => {
    const devices = await json(
      await server.call('POST', '/v1/keys', {
        body: { type: 'api', name: 'dev-bot', scopes: ['devices', 'keys'], expiresIn: '7d' },
      }),
    );
    expect(devices).toMatchObject({ type: 'api', name: 'dev-bot', scopes: ['devices', 'keys'] });
    const sub = await server.call('POST', '/v1/keys', {
      key: devices.key,
      body: { type: 'api', name: 'sub', scopes: ['devices'], expiresIn: '1d' },
    });
    expect(sub.status).toBe(201);
    expect((await json(sub)).createdBy).toBe('dev-bot');
    const wider = await server.call('POST', '/v1/keys', {
      key: devices.key,
      body: { type: 'api', name: 'sub', scopes: ['acls'], expiresIn: '1d' },
    });
    expect(wider.status).toBe(403);
    expect((await json(wider)).code).toBe('insufficient_scope');
    const all = await server.call('POST', '/v1/keys', {
      key: devices.key,
      body: { type: 'api', name: 'sub', scopes: ['all'], expiresIn: '1d' },
    });
    expect(all.status).toBe(403);
    const longer = await server.call('POST', '/v1/keys', {
      key: devices.key,
      body: { type: 'api', name: 'sub', scopes: ['devices'], expiresIn: '8d' },
    });
    expect(longer.status).toBe(403);
    const limit = await server.call('POST', '/v1/keys', {
      key: devices.key,
      body: { type: 'api', name: 'sub', scopes: ['devices'], expiresIn: '1d', rateLimit: 1000 },
    });
    expect(limit.status).toBe(403);
  });

  it('lets an all key set a rate limit', async () => {
    const key = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'fast', scopes: ['read'], rateLimit: 1000 } }),
    );
    expect(key.rateLimit).toBe(1000);
  });

  it('lists keys by type and state', async () => {
    const short = await json(
      await server.call('POST', '/v1/keys', { body: { description: 'short', expiresIn: '60s' } }),
    );
    const gone = await json(await server.call('POST', '/v1/keys', { body: { description: 'gone' } }));
    expect((await server.call('DELETE', `/v1/keys/${gone.id}`)).status).toBe(204);
    server.clock.advance(61_000);
    const list = async (query: string) =>
      (await json(await server.call('GET', `/v1/keys?${query}`))).keys.map((k: { id: string }) => k.id) as string[];
    expect(await list('state=expired')).toContain(short.id);
    expect(await list('state=valid')).not.toContain(short.id);
    expect(await list('state=revoked')).toEqual([gone.id]);
    expect((await json(await server.call('GET', `/v1/keys/${gone.id}`))).state).toBe('revoked');
    const apiKeys = (await json(await server.call('GET', '/v1/keys?type=api'))).keys;
    expect(apiKeys.length).toBeGreaterThan(0);
    expect(apiKeys.every((k: { type: string }) => k.type === 'api')).toBe(true);
    expect(apiKeys.map((k: { id: string }) => k.id)).not.toContain(short.id);
    expect((await server.call('GET', '/v1/keys?state=bogus')).status).toBe(400);
  });

  it('answers 404 for an unknown key id', async () => {
    const res = await server.call('GET', '/v1/keys/key_doesnotexist');
    expect(res.status).toBe(404);
    expect((await json(res)).code).toBe('not_found');
  });

  it('supports rotation: two keys valid at once, then the old one deleted', async () => {
    const old = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'deploy', scopes: ['read'] } }),
    );
    const fresh = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'deploy-2', scopes: ['read'] } }),
    );
    expect((await server.call('GET', '/v1/network', { key: old.key })).status).toBe(200);
    expect((await server.call('GET', '/v1/network', { key: fresh.key })).status).toBe(200);
    expect((await server.call('DELETE', `/v1/keys/${old.id}`)).status).toBe(204);
    expect((await server.call('GET', '/v1/network', { key: old.key })).status).toBe(401);
    expect((await server.call('GET', '/v1/network', { key: fresh.key })).status).toBe(200);
  });

  it('deletes a revoked key again with 204, one key.deleted event, and both calls audited', async () => {
    const key = await json(await server.call('POST', '/v1/keys', { body: { description: 'twice' } }));
    for (let i = 0; i < 2; i++) expect((await server.call('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
    const events = await json(await server.call('GET', '/v1/events?type=key.deleted&since=1h&limit=1000'));
    const deleted = events.entries.filter((event: { data: { key: { id: string } } }) => event.data.key.id === key.id);
    expect(deleted).toHaveLength(1);
    const audit = await json(await server.call('GET', '/v1/logs/audit?since=1h&limit=1000'));
    const calls = audit.entries.filter((entry: { path: string }) => entry.path === `/v1/keys/${key.id}`);
    // The second call changed nothing: it is recorded, but names no action.
    expect(calls.map((entry: { status: number; action: string | null }) => [entry.status, entry.action])).toEqual([
      [204, 'key.delete'],
      [204, null],
    ]);
  });
});

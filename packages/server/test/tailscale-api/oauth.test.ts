/**
 * OAuth clients of /api/v2 (`keyType: "client"`) and the client-credentials grant on the wire:
 * the secret shown once and stored hashed, tokens in Basic or the form, scope narrowing, the
 * Tailscale scopes on /api/v2 and their Warren equivalents on /v1, no escalation, the tags rule
 * of the auth keys a client creates, the audit entry naming the client, its rate limit, and
 * a deleted client's tokens stopping at once. The Go client's suite (compat/tailscale) drives
 * every API v2 method with a token as well.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries, createAuthKey, enroll } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

const basic = (user: string, password = '') =>
  `Basic ${Buffer.from(`${encodeURIComponent(user)}:${encodeURIComponent(password)}`).toString('base64')}`;
/** The secret with its last character changed (to another one, whatever it was). */
const wrongSecret = (secret: string) => `${secret.slice(0, -1)}${secret.endsWith('x') ? 'y' : 'x'}`;
/** A time as Tailscale's API writes it: whole seconds. */
const seconds = (time: string) => Math.floor(Date.parse(time) / 1000) * 1000;
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

const POLICY = {
  tagOwners: { 'tag:ci': ['autogroup:admin'], 'tag:prod': ['autogroup:admin'] },
  acls: [{ action: 'accept', src: ['autogroup:member'], dst: ['autogroup:member:*'] }],
};

describe('OAuth clients of /api/v2', () => {
  let server: TestServer;

  const v2 = (method: string, path: string, auth: string, body?: unknown) =>
    fetch(`${server.url}/api/v2${path}`, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const asKey = (key = server.apiKey) => basic(key);

  const createClient = async (body: Record<string, unknown>, key = server.apiKey) => {
    const res = await v2('POST', '/tailnet/-/keys', asKey(key), { keyType: 'client', ...body });
    const created = await json(res);
    expect(res.status, JSON.stringify(created)).toBe(200);
    return created as { id: string; key: string; scopes: string[]; tags: string[] };
  };

  const tokenRequest = (form: Record<string, string>, authorization?: string) =>
    fetch(`${server.url}/api/v2/oauth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(authorization ? { authorization } : {}),
      },
      body: new URLSearchParams(form).toString(),
    });

  const tokenOf = async (client: { id: string; key: string }, scope?: string) => {
    const res = await tokenRequest(
      { grant_type: 'client_credentials', ...(scope ? { scope } : {}) },
      basic(client.id, client.key),
    );
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    return body.access_token as string;
  };
  const bearer = (token: string) => `Bearer ${token}`;

  beforeAll(async () => {
    server = await startServer();
    expect((await server.call('PUT', '/v1/acl', { body: POLICY })).status).toBe(200);
    await enroll(server, (await createAuthKey(server)).key, { hostname: 'web' });
  });
  afterAll(() => server.close());

  it('creates a client whose secret is shown once and stored only as its hash', async () => {
    const client = await createClient({ scopes: ['devices:core', 'auth_keys'], tags: ['tag:ci'], description: 'ci' });
    expect(client).toMatchObject({ keyType: 'client', scopes: ['auth_keys', 'devices:core'], tags: ['tag:ci'] });
    expect(client.key).toMatch(/^wrn_client_/);
    const row = await server.database.storage.db
      .selectFrom('oauth_clients')
      .selectAll()
      .where('id', '=', client.id)
      .executeTakeFirstOrThrow();
    expect(row.secret_hash).toBe(sha256(client.key));
    expect(JSON.stringify(row)).not.toContain(client.key);

    const read = await json(await v2('GET', `/tailnet/-/keys/${client.id}`, asKey()));
    // Made by the network's first key, it lasts as long as that key (the test below).
    expect(read).toMatchObject({
      id: client.id,
      keyType: 'client',
      invalid: false,
      expires: expect.any(String),
      revoked: null,
    });
    expect(read.key).toBeUndefined();
    const listed = await json(await v2('GET', '/tailnet/-/keys', asKey()));
    expect(listed.keys.find((k: any) => k.id === client.id)).toMatchObject({ keyType: 'client' });
    // /v1's keys are auth and API keys only: clients are managed through /api/v2.
    const v1 = await json(await server.call('GET', '/v1/keys'));
    expect(v1.keys.map((k: any) => k.id)).not.toContain(client.id);
  });

  it('issues one-hour tokens for credentials in Basic or in the form, narrowed by scope', async () => {
    const client = await createClient({ scopes: ['devices:core', 'policy_file:read'], description: 'reader' });
    const viaBasic = await tokenRequest({ grant_type: 'client_credentials' }, basic(client.id, client.key));
    expect(viaBasic.headers.get('cache-control')).toBe('no-store');
    const issued = await json(viaBasic);
    expect(issued).toEqual({
      access_token: expect.stringMatching(/^wrn_oauth_/),
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'devices:core policy_file:read',
    });
    const row = await server.database.storage.db
      .selectFrom('oauth_tokens')
      .selectAll()
      .where('token_hash', '=', sha256(issued.access_token))
      .executeTakeFirstOrThrow();
    expect(row.expires_at - row.created_at).toBe(3_600_000);

    const viaForm = await tokenRequest({
      grant_type: 'client_credentials',
      client_id: client.id,
      client_secret: client.key,
      scope: 'devices:core:read',
    });
    expect(await json(viaForm)).toMatchObject({ scope: 'devices:core:read' });

    // Another client's secret is well formed, and still not this client's.
    const other = await createClient({ scopes: ['users:read'] });
    const refusals: [Response, number, string][] = [
      [
        await tokenRequest({ grant_type: 'client_credentials' }, basic(client.id, wrongSecret(client.key))),
        401,
        'invalid_client',
      ],
      [await tokenRequest({ grant_type: 'client_credentials' }, basic(client.id, other.key)), 401, 'invalid_client'],
      [await tokenRequest({ grant_type: 'client_credentials' }), 401, 'invalid_client'],
      [await tokenRequest({ grant_type: 'password' }, basic(client.id, client.key)), 400, 'unsupported_grant_type'],
      [
        await tokenRequest({ grant_type: 'client_credentials', scope: 'users' }, basic(client.id, client.key)),
        403,
        'invalid_scope',
      ],
      [
        await tokenRequest({ grant_type: 'client_credentials', scope: 'nope' }, basic(client.id, client.key)),
        400,
        'invalid_request',
      ],
    ];
    for (const [res, status, error] of refusals) {
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(body).toMatchObject({ error, status, message: expect.any(String) });
    }
  });

  it('takes a secret written as Tailscale writes its own, tskey-client-<id>-<secret>, whatever id comes with it', async () => {
    const client = await createClient({ scopes: ['auth_keys'], tags: ['tag:ci'], description: 'ci' });
    const other = await createClient({ scopes: ['users:read'] });
    // `tailscale up --auth-key='tskey-client-…?baseURL=…'` sends a placeholder id in Basic.
    const asTailscale = (secret: string) =>
      tokenRequest({ grant_type: 'client_credentials' }, basic('some-client-id', secret));
    const granted = await asTailscale(`tskey-client-${client.id}-${client.key}`);
    expect(await json(granted)).toMatchObject({ token_type: 'Bearer', scope: 'auth_keys' });
    expect(granted.status).toBe(200);
    for (const secret of [
      `tskey-client-${other.id}-${client.key}`,
      `tskey-client-${client.id}-${wrongSecret(client.key)}`,
      `tskey-client-${client.key}`,
    ]) {
      const refused = await asTailscale(secret);
      expect(refused.status, secret).toBe(401);
      expect(await json(refused)).toMatchObject({ error: 'invalid_client' });
    }
  });

  it("holds a token to Tailscale's scopes on /api/v2 and to their Warren equivalents on /v1", async () => {
    const reader = await createClient({ scopes: ['devices:core:read'], description: 'device reader' });
    const token = await tokenOf(reader);
    const devices = await v2('GET', '/tailnet/-/devices', bearer(token));
    expect(devices.status).toBe(200);
    expect((await json(devices)).devices.map((d: any) => d.hostname)).toEqual(['web']);
    const id = (await json(await server.call('GET', '/v1/devices'))).devices[0].id;
    const tagging = await v2('POST', `/device/${id}/tags`, bearer(token), { tags: ['tag:ci'] });
    expect(tagging.status).toBe(403);
    expect(await json(tagging)).toMatchObject({
      code: 'insufficient_scope',
      message: expect.stringContaining('devices:core'),
    });
    expect((await v2('GET', '/tailnet/-/keys', bearer(token))).status).toBe(403);
    expect((await v2('GET', `/device/${id}/routes`, bearer(token))).status).toBe(403);
    // A per-resource read scope has no Warren equivalent: nothing on /v1.
    expect((await server.call('GET', '/v1/devices', { key: token })).status).toBe(403);

    const auditor = await tokenOf(await createClient({ scopes: ['all:read'], description: 'auditor' }));
    expect((await server.call('GET', '/v1/devices', { key: auditor })).status).toBe(200);
    expect((await server.call('GET', '/v1/acl', { key: auditor })).status).toBe(200);
    expect((await server.call('POST', '/v1/keys', { key: auditor, body: {} })).status).toBe(403);
    expect((await v2('GET', '/tailnet/-/users', bearer(auditor))).status).toBe(200);

    const devicesAdmin = await tokenOf(await createClient({ scopes: ['devices:core', 'devices:routes'] }));
    const tagged = await server.call('POST', `/v1/devices/${id}/tags`, {
      key: devicesAdmin,
      body: { tags: ['tag:ci'] },
    });
    expect(tagged.status).toBe(200);
    expect(
      (await server.call('POST', `/v1/devices/${id}/tags`, { key: devicesAdmin, body: { tags: [] } })).status,
    ).toBe(200);
  });

  it('grants nothing its creator lacks', async () => {
    const keysOnly = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'key admin', scopes: ['keys'] } }),
    );
    const escalate = await v2('POST', '/tailnet/-/keys', asKey(keysOnly.key), { keyType: 'client', scopes: ['all'] });
    expect(escalate.status).toBe(403);
    expect(await json(escalate)).toMatchObject({ code: 'insufficient_scope' });
    await createClient({ scopes: ['auth_keys'], tags: ['tag:ci'] }, keysOnly.key);
    const raise = await v2('POST', '/tailnet/-/keys', asKey(keysOnly.key), {
      keyType: 'client',
      scopes: ['auth_keys'],
      rateLimit: 5000,
    });
    expect(raise.status).toBe(403);

    // A client with oauth_keys creates clients within its own scopes and tags only.
    const manager = await tokenOf(await createClient({ scopes: ['oauth_keys', 'auth_keys'], tags: ['tag:ci'] }));
    const within = await v2('POST', '/tailnet/-/keys', bearer(manager), {
      keyType: 'client',
      scopes: ['auth_keys:read'],
      tags: ['tag:ci'],
    });
    expect(within.status).toBe(200);
    expect(
      (await v2('POST', '/tailnet/-/keys', bearer(manager), { keyType: 'client', scopes: ['users'] })).status,
    ).toBe(403);
    const foreignTag = await v2('POST', '/tailnet/-/keys', bearer(manager), {
      keyType: 'client',
      scopes: ['auth_keys'],
      tags: ['tag:prod'],
    });
    expect(await json(foreignTag)).toMatchObject({ status: 400, code: 'invalid_tag' });
    const unknownTag = await v2('POST', '/tailnet/-/keys', asKey(), {
      keyType: 'client',
      scopes: ['users'],
      tags: ['tag:nope'],
    });
    expect(await json(unknownTag)).toMatchObject({ status: 400, code: 'invalid_tag' });
    const noScopes = await v2('POST', '/tailnet/-/keys', asKey(), { keyType: 'client', scopes: null });
    expect(await json(noScopes)).toMatchObject({ status: 400, code: 'invalid_request' });
    const badScope = await v2('POST', '/tailnet/-/keys', asKey(), { keyType: 'client', scopes: ['devices'] });
    expect(await json(badScope)).toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it("creates tagged auth keys only, of the client's own tags, that outlive the token", async () => {
    const client = await createClient({ scopes: ['auth_keys'], tags: ['tag:ci'], description: 'runner keys' });
    const token = await tokenOf(client);
    const create = (tags: string[] | null) =>
      v2('POST', '/tailnet/-/keys', bearer(token), {
        capabilities: { devices: { create: { reusable: true, tags } } },
        expirySeconds: 7 * 86400,
      });
    expect(await json(await create(null))).toMatchObject({ status: 400, code: 'invalid_request' });
    expect(await json(await create(['tag:prod']))).toMatchObject({ status: 400, code: 'invalid_tag' });
    const made = await json(await create(['tag:ci']));
    expect(made).toMatchObject({ keyType: 'auth', expirySeconds: 7 * 86400, tags: ['tag:ci'] });
    const viaV1 = await json(await server.call('GET', `/v1/keys/${made.id}`));
    expect(viaV1).toMatchObject({ tags: ['tag:ci'], createdBy: 'runner keys' });
    // Not an API key: a client cannot mint long-lived credentials of another kind.
    const apiKey = await server.call('POST', '/v1/keys', {
      key: token,
      body: { type: 'api', name: 'x', scopes: ['keys'] },
    });
    expect(apiKey.status).toBe(400);
  });

  it('audits calls and token grants with the client, and counts them against its rate limit', async () => {
    const client = await createClient({ scopes: ['users:read'], description: 'limited', rateLimit: 3 });
    const token = await tokenOf(client);
    expect((await v2('GET', '/tailnet/-/users', bearer(token))).status).toBe(200);
    expect((await v2('GET', '/tailnet/-/users', bearer(token))).status).toBe(200);
    const refused = await v2('GET', '/tailnet/-/users', bearer(token));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    // A new token is the same client: the limit holds.
    const again = await tokenRequest({ grant_type: 'client_credentials' }, basic(client.id, client.key));
    expect(again.status).toBe(429);
    expect(await json(again)).toMatchObject({ error: 'slow_down', status: 429 });

    const entries = await auditEntries(server);
    expect(entries.find((e) => e.path === '/api/v2/oauth/token' && e.target === client.id)).toMatchObject({
      action: 'oauth_token.create',
      keyName: 'limited',
    });
    expect(entries.find((e) => e.path === '/api/v2/tailnet/-/users' && e.keyName === 'limited')).toMatchObject({
      status: 200,
    });
    const logged = JSON.stringify(entries);
    expect(logged).not.toContain(token);
    expect(logged).not.toContain(client.key);
  });

  it('changes a client wholesale with PUT, and stops its tokens once deleted', async () => {
    const client = await createClient({ scopes: ['users:read'], description: 'before' });
    const token = await tokenOf(client);
    const set = await v2('PUT', `/tailnet/-/keys/${client.id}`, asKey(), {
      keyType: 'client',
      scopes: ['users:read', 'devices:core:read'],
      tags: null,
      description: 'after',
    });
    expect(await json(set)).toMatchObject({ scopes: ['devices:core:read', 'users:read'], description: 'after' });
    // The secret stays; tokens carry the scopes they were granted.
    expect(await tokenOf(client, 'devices:core:read')).toMatch(/^wrn_oauth_/);
    const authKey = await createAuthKey(server);
    expect(
      (await v2('PUT', `/tailnet/-/keys/${authKey.id}`, asKey(), { keyType: 'client', scopes: ['all'] })).status,
    ).toBe(400);

    expect((await v2('DELETE', `/tailnet/-/keys/${client.id}`, asKey())).status).toBe(200);
    const after = await v2('GET', '/tailnet/-/users', bearer(token));
    // Its tokens are gone with it: not known any more.
    expect(after.status).toBe(401);
    expect(await json(after)).toMatchObject({ code: 'unauthenticated' });
    expect((await tokenRequest({ grant_type: 'client_credentials' }, basic(client.id, client.key))).status).toBe(401);
    const rows = await server.database.storage.db
      .selectFrom('oauth_tokens')
      .select('token_hash')
      .where('client_id', '=', client.id)
      .execute();
    expect(rows).toEqual([]);
    const active = await json(await v2('GET', '/tailnet/-/keys', asKey()));
    expect(active.keys.map((k: any) => k.id)).not.toContain(client.id);
    const all = await json(await v2('GET', '/tailnet/-/keys?all=true', asKey()));
    expect(all.keys.find((k: any) => k.id === client.id)).toMatchObject({ invalid: true, revoked: expect.any(String) });
  });

  it('lets a token expire after an hour', async () => {
    const client = await createClient({ scopes: ['users:read'] });
    const token = await tokenOf(client);
    expect((await v2('GET', '/tailnet/-/users', bearer(token))).status).toBe(200);
    server.clock.advance(3_600_000);
    const expired = await v2('GET', '/tailnet/-/users', bearer(token));
    expect(expired.status).toBe(401);
    expect(await json(expired)).toMatchObject({ code: 'key_expired' });
    expect((await v2('GET', '/tailnet/-/users', bearer(await tokenOf(client)))).status).toBe(200);
  });

  it('ends a client made by an API key when that key expires, as a key a key makes does', async () => {
    const made = await server.call('POST', '/v1/keys', {
      body: { type: 'api', name: 'short-lived', scopes: ['keys', 'users'], expiresIn: '2d' },
    });
    const { key: shortKey, expires } = await json(made);
    const client = await createClient({ scopes: ['users:read', 'oauth_keys'] }, shortKey);
    const listed = (await json(await v2('GET', `/tailnet/-/keys/${client.id}`, asKey()))) as { expires: string };
    expect(Date.parse(listed.expires)).toBe(seconds(expires));
    // A client that client makes lasts no longer either, nor does a token past the key's expiry.
    const child = await createClient({ scopes: ['users:read'] }, await tokenOf(client));
    const childRecord = await json(await v2('GET', `/tailnet/-/keys/${child.id}`, asKey()));
    expect(Date.parse(childRecord.expires)).toBe(seconds(expires));
    // A client made by the network's key and changed by the short-lived one lasts no longer than it.
    const wide = await createClient({ scopes: ['users:read'] });
    const changed = await v2('PUT', `/tailnet/-/keys/${wide.id}`, asKey(shortKey), {
      keyType: 'client',
      scopes: ['users:read'],
      tags: null,
      description: 'changed by a short-lived key',
    });
    expect(Date.parse((await json(changed)).expires)).toBe(seconds(expires));
    server.clock.advance(2 * 86_400_000 - 1_800_000);
    const late = await json(await tokenRequest({ grant_type: 'client_credentials' }, basic(client.id, client.key)));
    expect(late.expires_in).toBe(1_800);
    server.clock.advance(1_800_000);
    for (const c of [client, child]) {
      const refused = await tokenRequest({ grant_type: 'client_credentials' }, basic(c.id, c.key));
      expect(refused.status).toBe(401);
      expect(await json(refused)).toMatchObject({ code: 'key_expired' });
    }
    // A client made by a console session or the network's first key lasts as long as that key.
    const lasting = await json(
      await v2('GET', `/tailnet/-/keys/${(await createClient({ scopes: ['users:read'] })).id}`, asKey()),
    );
    expect(lasting.expires).not.toBeNull();
  });
});

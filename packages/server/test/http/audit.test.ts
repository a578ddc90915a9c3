import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../../src/lib/secrets.js';
import { insertSshCheck } from '../../src/modules/devices/login/ssh-checks.repository.js';
import { consoleSession, pendingMachineLogin } from '../control/tailscale/console-session.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('audit log', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { apiRateLimit: 100 } });
  });
  afterAll(() => server.close());

  const audit = async (query = '') => json(await server.call('GET', `/v1/logs/audit${query}`));

  it('records successes, 4xx, 401 and 429 with key name, method, path, status, address and request id', async () => {
    const bot = await json(
      await server.call('POST', '/v1/keys', {
        body: { type: 'api', name: 'deploy-bot', scopes: ['read'], rateLimit: 2 },
      }),
    );
    await server.call('GET', '/v1/network', { key: bot.key, headers: { 'x-request-id': 'req-ok' } });
    await server.call('POST', '/v1/keys', { key: bot.key, body: {}, headers: { 'x-request-id': 'req-403' } });
    await server.call('GET', '/v1/network', { key: bot.key, headers: { 'x-request-id': 'req-429' } });
    await server.call('GET', '/v1/network', { key: 'nonsense', headers: { 'x-request-id': 'req-401' } });
    const page = await audit('?limit=1000');
    const byId = new Map(page.entries.map((e: { requestId: string }) => [e.requestId, e]));
    expect(byId.get('req-ok')).toMatchObject({
      keyId: bot.id,
      keyName: 'deploy-bot',
      method: 'GET',
      path: '/v1/network',
      status: 200,
      clientAddr: '127.0.0.1',
    });
    expect(byId.get('req-403')).toMatchObject({ keyName: 'deploy-bot', status: 403 });
    expect(byId.get('req-429')).toMatchObject({ keyName: 'deploy-bot', status: 429 });
    // A call without a valid key belongs to no network, so no network's log shows it.
    expect(byId.get('req-401')).toBeUndefined();
    const creation = page.entries.find(
      (e: { action: string; target: string }) => e.action === 'key.create' && e.target === bot.id,
    );
    expect(creation).toMatchObject({ method: 'POST', path: '/v1/keys', status: 201, keyName: 'initial' });
    const unauth = await server.database.storage.db
      .selectFrom('audit_log')
      .selectAll()
      .where('request_id', '=', 'req-401')
      .executeTakeFirst();
    expect(unauth).toMatchObject({ status: 401, key_id: null, key_name: null, network_id: null });
  });

  it("records a revoked or expired key's refused calls in its network's log, naming the key", async () => {
    const create = async (name: string, expiresIn = '1h') =>
      json(await server.call('POST', '/v1/keys', { body: { type: 'api', name, scopes: ['read'], expiresIn } }));
    const old = await create('rotated-out');
    const brief = await create('short-lived', '60s');
    expect((await server.call('DELETE', `/v1/keys/${old.id}`)).status).toBe(204);
    server.clock.advance(61_000);
    const revoked = await server.call('GET', '/v1/network', {
      key: old.key,
      headers: { 'x-request-id': 'req-revoked' },
    });
    const expired = await server.call('GET', '/v1/devices', {
      key: brief.key,
      headers: { 'x-request-id': 'req-expired' },
    });
    expect([revoked.status, expired.status]).toEqual([401, 401]);
    const byId = new Map((await audit('?limit=1000')).entries.map((e: { requestId: string }) => [e.requestId, e]));
    // After a rotation, the calls still made with the old key are what its owners look for.
    expect(byId.get('req-revoked')).toMatchObject({ keyId: old.id, keyName: 'rotated-out', status: 401 });
    expect(byId.get('req-expired')).toMatchObject({ keyId: brief.id, keyName: 'short-lived', path: '/v1/devices' });
  });

  it('holds no secret', async () => {
    const created = await json(await server.call('POST', '/v1/keys', { body: { description: 'secret check' } }));
    const rows = await server.database.storage.db.selectFrom('audit_log').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(created.key);
  });

  it('holds no secret sent where an id belongs, in its network or in none', async () => {
    const created = await json(await server.call('POST', '/v1/keys', { body: { description: 'misused' } }));
    // A key pasted in place of its id, by its network's key and by no key at all.
    await server.call('DELETE', `/v1/keys/${created.key}`, { headers: { 'x-request-id': 'req-pasted' } });
    await server.call('GET', `/v1/keys/${server.apiKey}`, { key: null });
    const entry = (await audit('?limit=1000')).entries.find((e: { requestId: string }) => e.requestId === 'req-pasted');
    expect(entry).toMatchObject({ method: 'DELETE', path: '/v1/keys/wrn_auth_…', status: 404 });
    const rows = JSON.stringify(await server.database.storage.db.selectFrom('audit_log').selectAll().execute());
    expect(rows).not.toContain(created.key);
    expect(rows).not.toContain(server.apiKey);
  });

  it("holds no one-time link's token: a pending login's or SSH check's, viewed or approved", async () => {
    const { db } = server.database.storage;
    const now = server.clock.now();
    const loginToken = randomBytes(32).toString('base64url');
    await pendingMachineLogin(server, hashSecret(loginToken));
    const checkToken = randomBytes(32).toString('base64url');
    await insertSshCheck(db, {
      token_hash: hashSecret(checkToken),
      network_id: server.networkId,
      src_device_id: 'dev_src',
      dst_device_id: 'dev_dst',
      local_user: 'root',
      period_ms: 60 * 60_000,
      created_at: now,
      expires_at: now + 10 * 60_000,
    });
    const owner = (await json(await server.call('GET', '/v1/users?role=owner'))).users[0].id;
    const person = await consoleSession(server, owner);
    for (const url of [`${server.url}/register/${loginToken}`, `${server.url}/ssh-check/${checkToken}`]) {
      await person.view(url);
      await person.approve(url);
    }

    const paths = (await audit('?limit=1000')).entries.map((e: { path: string }) => e.path);
    for (const path of [
      '/auth/register/…',
      '/auth/register/…/approve',
      '/auth/ssh-check/…',
      '/auth/ssh-check/…/approve',
    ]) {
      expect(paths).toContain(path);
    }
    const rows = JSON.stringify(await db.selectFrom('audit_log').selectAll().execute());
    expect(rows).not.toContain(loginToken);
    expect(rows).not.toContain(checkToken);
  });

  it('writes nothing for a change that failed, and the failure itself as a plain entry', async () => {
    const before = (await audit('?limit=1000')).entries.filter((e: { action: string | null }) => e.action).length;
    const res = await server.call('POST', '/v1/keys', {
      body: { expiresIn: 'forever' },
      headers: { 'x-request-id': 'req-bad' },
    });
    expect(res.status).toBe(400);
    const after = await audit('?limit=1000');
    expect(after.entries.filter((e: { action: string | null }) => e.action).length).toBe(before);
    expect(after.entries.find((e: { requestId: string }) => e.requestId === 'req-bad')).toMatchObject({
      status: 400,
      action: null,
    });
  });

  it('lists calls in the order they were made, a refused call before the change that followed it', async () => {
    // The refusal's entry waits in the queue; the change's is written with the change. Both
    // calls answered once already, so the second pair is quick enough to meet in one batch.
    for (const round of [1, 2]) {
      await server.call('GET', '/v1/keys?state=bogus', { headers: { 'x-request-id': `req-first-${round}` } });
      await server.call('POST', '/v1/users', {
        body: { loginName: `order-${round}@example.com` },
        headers: { 'x-request-id': `req-then-${round}` },
      });
    }
    const ids = (await audit('?limit=1000')).entries.map((e: { requestId: string }) => e.requestId);
    expect(ids.indexOf('req-first-2')).toBeLessThan(ids.indexOf('req-then-2'));
  });

  it('pages with keyset cursors in ascending order and tails from the last cursor', async () => {
    for (let i = 0; i < 7; i++) await server.call('GET', '/v1/users');
    const all = (await audit('?limit=1000')).entries.map((e: { id: string }) => e.id);
    const seen: string[] = [];
    let page = await audit('?limit=3');
    seen.push(...page.entries.map((e: { id: string }) => e.id));
    while (page.hasMore) {
      page = await audit(`?limit=3&cursor=${page.nextCursor}`);
      seen.push(...page.entries.map((e: { id: string }) => e.id));
    }
    // Reading the log is itself audited, so the walk sees at least everything listed before it.
    expect(seen.slice(0, all.length)).toEqual(all);
    expect(new Set(seen).size).toBe(seen.length);
    const tail = await audit(`?cursor=${page.nextCursor}`);
    expect(tail.entries.every((e: { method: string; path: string }) => e.path === '/v1/logs/audit')).toBe(true);
  });

  it('filters by key and rejects bad paging input', async () => {
    const page = await audit('?key=key_nothing');
    expect(page.entries).toEqual([]);
    expect(typeof page.nextCursor).toBe('string');
    expect((await server.call('GET', '/v1/logs/audit?since=yesterday')).status).toBe(400);
    expect((await json(await server.call('GET', '/v1/logs/audit?since=1y'))).code).toBe('invalid_duration');
    expect((await server.call('GET', '/v1/logs/audit?limit=0')).status).toBe(400);
    expect((await server.call('GET', '/v1/logs/audit?limit=1001')).status).toBe(400);
    expect((await server.call('GET', '/v1/logs/audit?cursor=abc')).status).toBe(400);
  });
});

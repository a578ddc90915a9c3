import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

describe('users', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('adds, lists by role, changes role and removes users', async () => {
    const created = await server.call('POST', '/v1/users', {
      body: { loginName: 'Ana@Example.com', displayName: 'Ana', role: 'admin' },
    });
    expect(created.status).toBe(201);
    const ana = await json(created);
    expect(ana).toMatchObject({
      loginName: 'ana@example.com',
      displayName: 'Ana',
      role: 'admin',
      status: 'active',
      deviceCount: 0,
      lastSeen: null,
    });
    expect(ana.id).toMatch(/^usr_/);
    expect(created.headers.get('location')).toBe(`/v1/users/${ana.id}`);
    const admins = await json(await server.call('GET', '/v1/users?role=admin'));
    expect(admins.users.map((u: { id: string }) => u.id)).toEqual([ana.id]);
    const patched = await server.call('PATCH', `/v1/users/${ana.id}`, { body: { role: 'auditor' } });
    expect(patched.status).toBe(200);
    expect((await json(patched)).role).toBe('auditor');
    expect((await server.call('DELETE', `/v1/users/${ana.id}`)).status).toBe(204);
    expect((await server.call('PATCH', `/v1/users/${ana.id}`, { body: { role: 'member' } })).status).toBe(404);
  });

  it.each([
    [{ loginName: 'not-an-email' }, 'invalid_request'],
    [{ loginName: 'x@example.com', role: 'superuser' }, 'invalid_request'],
    [{ loginName: 42 }, 'invalid_request'],
    [{}, 'invalid_request'],
    [{ loginName: 'x@example.com', admin: true }, 'unknown_field'],
  ])('rejects %j with %s', async (body, code) => {
    const res = await server.call('POST', '/v1/users', { body });
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe(code);
  });

  it('emits user.updated once per change: a PATCH setting what the user has emits none', async () => {
    const bo = await json(
      await server.call('POST', '/v1/users', {
        body: { loginName: 'bo@example.com', displayName: 'Bo', role: 'member' },
      }),
    );
    const patch = async (body: object) => {
      const res = await server.call('PATCH', `/v1/users/${bo.id}`, { body });
      expect(res.status).toBe(200);
    };
    await patch({ role: 'auditor' });
    await patch({ role: 'auditor' });
    await patch({});
    await patch({ displayName: 'Bo' });
    await patch({ displayName: 'Bo B.' });
    const events = await json(await server.call('GET', '/v1/events?type=user.updated&since=1h&limit=1000'));
    const ofBo = events.entries.filter((e: { data: { user: { id: string } } }) => e.data.user.id === bo.id);
    expect(ofBo.map((e: { data: { user: { role: string; displayName: string } } }) => e.data.user)).toMatchObject([
      { role: 'auditor', displayName: 'Bo' },
      { role: 'auditor', displayName: 'Bo B.' },
    ]);
  });

  it('refuses a duplicate login name with 409', async () => {
    await server.call('POST', '/v1/users', { body: { loginName: 'dup@example.com' } });
    const res = await server.call('POST', '/v1/users', { body: { loginName: 'dup@example.com' } });
    expect(res.status).toBe(409);
    expect((await json(res)).code).toBe('conflict');
  });

  it('never removes or demotes the last owner', async () => {
    const owner = (await json(await server.call('GET', '/v1/users?role=owner'))).users[0];
    const demote = await server.call('PATCH', `/v1/users/${owner.id}`, { body: { role: 'admin' } });
    expect(demote.status).toBe(409);
    expect((await json(demote)).code).toBe('invalid_state');
    expect((await server.call('DELETE', `/v1/users/${owner.id}`)).status).toBe(409);
    const second = await json(
      await server.call('POST', '/v1/users', { body: { loginName: 'co@example.com', role: 'owner' } }),
    );
    expect((await server.call('PATCH', `/v1/users/${owner.id}`, { body: { role: 'admin' } })).status).toBe(200);
    expect((await server.call('DELETE', `/v1/users/${second.id}`)).status).toBe(409);
  });

  it('keeps API keys working when the user is removed', async () => {
    const user = await json(
      await server.call('POST', '/v1/users', { body: { loginName: 'leaver@example.com', role: 'admin' } }),
    );
    const key = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'leaver-bot', scopes: ['read'] } }),
    );
    expect((await server.call('DELETE', `/v1/users/${user.id}`)).status).toBe(204);
    expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
  });
});

describe('plan limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ plan: 'free' });
  });
  afterAll(() => server.close());

  it('stops at the free plan seat limit with 403 plan_limit and adds nothing', async () => {
    expect((await server.call('POST', '/v1/users', { body: { loginName: 'a@example.com' } })).status).toBe(201);
    expect((await server.call('POST', '/v1/users', { body: { loginName: 'b@example.com' } })).status).toBe(201);
    const res = await server.call('POST', '/v1/users', { body: { loginName: 'c@example.com' } });
    expect(res.status).toBe(403);
    expect((await json(res)).code).toBe('plan_limit');
    const network = await json(await server.call('GET', '/v1/network'));
    expect(network).toMatchObject({
      plan: 'free',
      limits: { users: 3, devices: 100, logRetentionDays: 7 },
      usage: { users: 3 },
    });
  });
});

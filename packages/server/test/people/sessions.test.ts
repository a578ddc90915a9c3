/**
 * Console sessions opened with one-time links: what a session may do by role, CSRF on unsafe
 * methods, and every way a session ends (logout, idle, lifetime, role change, suspension,
 * removal). Also the user lifecycle a session depends on: suspend, restore, last owner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLoginLink } from '../../src/modules/sessions/login-links.js';
import { consoleLoginLink } from '../../src/modules/sso/console-login.js';
import { auditEntries, createAuthKey, enroll, expectProblem, heartbeat, register } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { Browser } from './browser.js';
import { addUser as addUserOf, signIn as signInOf } from './sign-in.js';

let server: TestServer;
let ownerId: string;

beforeAll(async () => {
  server = await startServer();
  const users = await json(await server.call('GET', '/v1/users'));
  ownerId = users.users[0].id;
});
afterAll(() => server?.close());

const addUser = (loginName: string, role: string) => addUserOf(server, loginName, role);
const signIn = (userId: string) => signInOf(server, userId);

const v1 = (path: string) => `${server.url}/v1${path}`;

describe('one-time sign-in links', () => {
  it('sign in once, within ten minutes', async () => {
    const db = server.database.storage.db;
    const token = await createLoginLink(db, server.networkId, ownerId, server.clock.now());
    expect((await new Browser().get(`${server.url}/auth/link?token=${token}`)).status).toBe(303);
    await expectProblem(await new Browser().get(`${server.url}/auth/link?token=${token}`), 401, 'unauthenticated');
    const late = await createLoginLink(db, server.networkId, ownerId, server.clock.now());
    server.clock.advance(10 * 60_000 + 1);
    await expectProblem(await new Browser().get(`${server.url}/auth/link?token=${late}`), 401, 'unauthenticated');
    const stored = await db.selectFrom('login_links').select('token_hash').execute();
    expect(stored.map((r) => r.token_hash)).not.toContain(token);
  });

  it('send a person who opens a used, expired or refused link to a page that says so', async () => {
    const db = server.database.storage.db;
    const page = { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } };
    const open = (token: string) => new Browser().get(`${server.url}/auth/link?token=${token}`, page);
    const used = await createLoginLink(db, server.networkId, ownerId, server.clock.now());
    expect((await open(used)).status).toBe(303);
    const again = await open(used);
    expect(again.status).toBe(303);
    expect(again.headers.get('location')).toBe('/signin?problem=link_invalid');
    expect(again.headers.getSetCookie()).toEqual([]);
    const late = await createLoginLink(db, server.networkId, ownerId, server.clock.now());
    server.clock.advance(10 * 60_000 + 1);
    expect((await open(late)).headers.get('location')).toBe('/signin?problem=link_invalid');
    const suspended = await addUser('gone@example.com', 'member');
    const link = await createLoginLink(db, server.networkId, suspended, server.clock.now());
    await server.call('PATCH', `/v1/users/${suspended}`, { body: { status: 'suspended' } });
    const refused = await open(link);
    expect(refused.headers.get('location')).toBe('/signin?problem=user_inactive');
    expect(refused.headers.getSetCookie()).toEqual([]);
  });

  it('are refused on a network that enforces single sign-on', async () => {
    const token = await createLoginLink(server.database.storage.db, server.networkId, ownerId, server.clock.now());
    const set = (enforce: boolean) =>
      server.call('PUT', '/v1/network/sso', {
        body: { issuer: 'https://id.example.com', clientId: 'c', clientSecret: 's', enforce },
      });
    expect((await set(true)).status).toBe(200);
    try {
      const other = await createLoginLink(server.database.storage.db, server.networkId, ownerId, server.clock.now());
      const page = await new Browser().get(`${server.url}/auth/link?token=${other}`, {
        headers: { accept: 'text/html' },
      });
      expect(page.headers.get('location')).toBe('/signin?problem=sso_required');
      await expectProblem(await new Browser().get(`${server.url}/auth/link?token=${token}`), 403, 'sso_required');
    } finally {
      expect((await set(false)).status).toBe(200);
    }
  });

  it('are not made for a network that enforces single sign-on (warren console login)', async () => {
    const db = server.database.storage.db;
    const make = () =>
      consoleLoginLink(db, { network: 'test', loginName: 'owner@example.com', now: server.clock.now() });
    const set = (enforce: boolean) =>
      server.call('PUT', '/v1/network/sso', {
        body: { issuer: 'https://id.example.com', clientId: 'c', clientSecret: 's', enforce },
      });
    expect((await set(true)).status).toBe(200);
    try {
      await expect(make()).rejects.toMatchObject({ code: 'sso_required' });
    } finally {
      expect((await set(false)).status).toBe(200);
    }
    await expect(make()).resolves.toMatchObject({ token: expect.any(String) });
  });

  it('stop opening the console once the network enforces single sign-on: their sessions end', async () => {
    const set = (enforce: boolean) =>
      server.call('PUT', '/v1/network/sso', {
        body: { issuer: 'https://id.example.com', clientId: 'c', clientSecret: 's', enforce },
      });
    const { browser } = await signIn(ownerId);
    expect((await browser.get(v1('/me'))).status).toBe(200);
    expect((await set(false)).status).toBe(200);
    expect((await browser.get(v1('/me'))).status).toBe(200);
    expect((await set(true)).status).toBe(200);
    try {
      await expectProblem(await browser.get(v1('/me')), 401, 'unauthenticated');
    } finally {
      expect((await set(false)).status).toBe(200);
    }
  });
});

describe('the session cookie', () => {
  it('is Secure when browsers reach the server over https, behind a proxy that ends TLS', async () => {
    // The proxy forwards plain http; the operator's public URL is what the browser used.
    const behindProxy = await startServer({ settings: { publicUrl: 'https://warren.example.test' } });
    try {
      const users = await json(await behindProxy.call('GET', '/v1/users'));
      const db = behindProxy.database.storage.db;
      const token = await createLoginLink(db, behindProxy.networkId, users.users[0].id, behindProxy.clock.now());
      const res = await new Browser().get(`${behindProxy.url}/auth/link?token=${token}`);
      expect(res.status).toBe(303);
      const cookie = res.headers.getSetCookie().find((c) => c.startsWith('warren_session='));
      expect(cookie).toMatch(/; HttpOnly; SameSite=Lax; Secure$/);
    } finally {
      await behindProxy.close();
    }
  });
});

describe('a session as a principal', () => {
  it('needs the CSRF token on unsafe methods, and names the person in the audit log', async () => {
    const { browser, csrf } = await signIn(ownerId);
    const body = JSON.stringify({ loginName: 'csrf@example.com' });
    const post = (headers: Record<string, string>) =>
      fetch(v1('/users'), {
        method: 'POST',
        body,
        headers: {
          'content-type': 'application/json',
          cookie: `warren_session=${browser.cookie(server.url, 'warren_session')}`,
          ...headers,
        },
      });
    await expectProblem(await post({}), 403, 'csrf_failed');
    await expectProblem(await post({ 'x-csrf-token': `${csrf}x` }), 403, 'csrf_failed');
    const created = await post({ 'x-csrf-token': csrf });
    expect(created.status).toBe(201);
    const entry = (await auditEntries(server)).find((e) => e.action === 'user.create' && e.status === 201 && e.userId);
    expect(entry).toMatchObject({ keyId: null, keyName: null, userId: ownerId, userLogin: 'owner@example.com' });
    const me = await json(await browser.get(v1('/me')));
    expect(me.csrfToken).toBe(csrf);
  });

  it('an auditor reads but changes nothing', async () => {
    const { browser } = await signIn(await addUser('auditor@example.com', 'auditor'));
    expect((await browser.get(v1('/users'))).status).toBe(200);
    const me = await json(await browser.get(v1('/me')));
    expect(me.scopes).toEqual(['read']);
  });

  it('a member sees and deletes only their own devices', async () => {
    const memberId = await addUser('member@example.com', 'member');
    const mine = await enroll(server, (await createAuthKey(server, { user: memberId })).key);
    const theirs = await enroll(server, (await createAuthKey(server)).key);
    const { browser, csrf } = await signIn(memberId);
    const list = await json(await browser.get(v1('/devices')));
    expect(list.devices.map((d: { id: string }) => d.id)).toEqual([mine.device.id]);
    expect((await browser.get(v1(`/devices/${mine.device.id}`))).status).toBe(200);
    await expectProblem(await browser.get(v1(`/devices/${theirs.device.id}`)), 404, 'not_found');
    await expectProblem(await browser.get(v1('/users')), 403, 'insufficient_scope');
    const headers = { 'x-csrf-token': csrf };
    await expectProblem(
      await browser.get(v1(`/devices/${theirs.device.id}`), { method: 'DELETE', headers }),
      404,
      'not_found',
    );
    expect((await browser.get(v1(`/devices/${mine.device.id}`), { method: 'DELETE', headers })).status).toBe(204);
    expect((await server.call('GET', `/v1/devices/${theirs.device.id}`)).status).toBe(200);
  });
});

describe('a session ends', () => {
  it('on logout', async () => {
    const { browser, csrf } = await signIn(ownerId);
    await expectProblem(await browser.get(`${server.url}/auth/logout`, { method: 'POST' }), 403, 'csrf_failed');
    const copy = browser.cookie(server.url, 'warren_session')!;
    expect(
      (await browser.get(`${server.url}/auth/logout`, { method: 'POST', headers: { 'x-csrf-token': csrf } })).status,
    ).toBe(204);
    const replay = await fetch(v1('/me'), { headers: { cookie: `warren_session=${copy}` } });
    await expectProblem(replay, 401, 'unauthenticated');
  });

  it('leaves a cookie of no session an anonymous call, counted against the client address', async () => {
    const call = () => fetch(v1('/network'), { headers: { cookie: 'warren_session=no-such-session' } });
    const first = await call();
    await expectProblem(first, 401, 'unauthenticated');
    expect(first.headers.get('ratelimit-limit')).toBe(String(server.app.ctx.settings.anonymousRateLimit));
    const second = await call();
    await expectProblem(second, 401, 'unauthenticated');
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(
      Number(first.headers.get('ratelimit-remaining')) - 1,
    );
  });

  it('after an hour idle, and after twelve hours however busy', async () => {
    const idle = await signIn(ownerId);
    server.clock.advance(3_600_000);
    await expectProblem(await idle.browser.get(v1('/me')), 401, 'unauthenticated');
    const busy = await signIn(ownerId);
    // A call every 50 minutes: 14 of them reach 11 h 40 min; the 15th is past 12 h.
    for (let call = 0; call < 14; call++) {
      server.clock.advance(50 * 60_000);
      expect((await busy.browser.get(v1('/me'))).status).toBe(200);
    }
    server.clock.advance(50 * 60_000);
    await expectProblem(await busy.browser.get(v1('/me')), 401, 'unauthenticated');
  });

  it('when the user changes role, is suspended or is removed', async () => {
    const id = await addUser('leaver@example.com', 'admin');
    const first = await signIn(id);
    expect((await server.call('PATCH', `/v1/users/${id}`, { body: { role: 'auditor' } })).status).toBe(200);
    await expectProblem(await first.browser.get(v1('/me')), 401, 'unauthenticated');
    const second = await signIn(id);
    expect((await server.call('PATCH', `/v1/users/${id}`, { body: { status: 'suspended' } })).status).toBe(200);
    await expectProblem(await second.browser.get(v1('/me')), 401, 'unauthenticated');
    expect((await server.call('PATCH', `/v1/users/${id}`, { body: { status: 'active' } })).status).toBe(200);
    const third = await signIn(id);
    expect((await server.call('DELETE', `/v1/users/${id}`)).status).toBe(204);
    await expectProblem(await third.browser.get(v1('/me')), 401, 'unauthenticated');
  });
});

describe('suspension', () => {
  it('disconnects the devices and refuses their credentials until the user is restored; keys stay', async () => {
    const id = await addUser('contractor@example.com', 'member');
    const authKey = await createAuthKey(server, { user: id, reusable: true });
    const device = await enroll(server, authKey.key);
    expect((await heartbeat(server, device.nodeToken)).status).toBe(200);
    const suspended = await server.call('PATCH', `/v1/users/${id}`, { body: { status: 'suspended' } });
    expect((await json(suspended)).status).toBe('suspended');
    expect((await json(await server.call('GET', `/v1/devices/${device.device.id}`))).online).toBe(false);
    expect((await heartbeat(server, device.nodeToken)).status).toBe(401);
    await expectProblem(await register(server, authKey.key), 401, 'unauthenticated');
    expect((await server.call('GET', `/v1/keys/${authKey.id}`)).status).toBe(200);
    await server.call('PATCH', `/v1/users/${id}`, { body: { status: 'active' } });
    expect((await heartbeat(server, device.nodeToken)).status).toBe(200);
  });

  it('never leaves the network without an active owner', async () => {
    const problem = await expectProblem(
      await server.call('PATCH', `/v1/users/${ownerId}`, { body: { status: 'suspended' } }),
      409,
      'invalid_state',
    );
    expect(problem.detail).toMatch(/last active owner/);
    await expectProblem(
      await server.call('PATCH', `/v1/users/${ownerId}`, { body: { role: 'admin' } }),
      409,
      'invalid_state',
    );
    await expectProblem(await server.call('DELETE', `/v1/users/${ownerId}`), 409, 'invalid_state');
    await expectProblem(
      await server.call('PATCH', `/v1/users/${ownerId}`, { body: { status: 'gone' } }),
      400,
      'invalid_request',
    );
  });
});

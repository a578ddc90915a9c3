/**
 * Single sign-on against a real OpenID provider (oidc-provider on loopback), driven hop by hop
 * over HTTP as a browser would: the success path, and each check that must refuse a sign-in.
 */

import { type IdentityProvider, startIdentityProvider } from '@warren/test-identity-provider';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditEntries, expectProblem } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { Browser } from './browser.js';

let server: TestServer;
let idp: IdentityProvider;

const isCallback = (next: URL) => next.origin === new URL(server.url).origin && next.pathname === '/auth/callback';

/** Starts a sign-in and walks the provider's side; returns the callback URL the provider sent back. */
async function toCallback(browser: Browser, returnTo?: string): Promise<string> {
  const query = new URLSearchParams({ network: 'test', ...(returnTo === undefined ? {} : { returnTo }) });
  const walk = await browser.follow(`${server.url}/auth/login?${query}`, isCallback);
  expect(walk.next, `stopped at ${walk.url} with ${walk.response.status}: ${await walk.response.text()}`).toBeDefined();
  return walk.next!;
}

async function setSso(body: Record<string, unknown> = {}) {
  const res = await server.call('PUT', '/v1/network/sso', {
    body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, ...body },
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return json(res);
}

const sessionOf = (browser: Browser) => browser.cookie(server.url, 'warren_session');

beforeAll(async () => {
  server = await startServer({ plan: 'free', settings: { ssoAllowHttp: true } });
  idp = await startIdentityProvider({ redirectUri: `${server.url}/auth/callback` });
});
afterAll(async () => {
  await idp?.close();
  await server?.close();
});
beforeEach(async () => {
  idp.signInAs({ email: 'owner@example.com', emailVerified: true });
  idp.publishForeignKeys(false);
  await setSso({ allowedDomains: [] });
});

describe('single sign-on settings', () => {
  it('returns the settings without the client secret, and never logs it', async () => {
    const body = await setSso({ allowedDomains: ['Example.com'], enforce: false });
    expect(body).toEqual({
      issuer: idp.issuer,
      clientId: idp.clientId,
      allowedDomains: ['example.com'],
      enforce: false,
      redirectUri: `${server.url}/auth/callback`,
      updated: expect.any(String),
    });
    const got = await server.call('GET', '/v1/network/sso');
    const text = await got.text();
    expect(got.status).toBe(200);
    expect(text).not.toContain(idp.clientSecret);
    expect(JSON.stringify(await auditEntries(server))).not.toContain(idp.clientSecret);
  });

  it('refuses an issuer that is not a URL and a malformed domain, changing nothing', async () => {
    const bad = await server.call('PUT', '/v1/network/sso', {
      body: { issuer: 'not a url', clientId: 'x', clientSecret: 'y' },
    });
    await expectProblem(bad, 400, 'invalid_request');
    const domain = await server.call('PUT', '/v1/network/sso', {
      body: { issuer: idp.issuer, clientId: 'x', clientSecret: 'y', allowedDomains: ['not a domain'] },
    });
    await expectProblem(domain, 400, 'invalid_request');
    expect((await json(await server.call('GET', '/v1/network/sso'))).clientId).toBe(idp.clientId);
  });

  it('refuses a blank client id or secret and an issuer with spaces around it, changing nothing', async () => {
    const base = { issuer: idp.issuer, clientId: 'x', clientSecret: 'y' };
    for (const body of [
      { ...base, clientId: '   ' },
      { ...base, clientSecret: ' ' },
      { ...base, issuer: ` ${idp.issuer} ` },
    ]) {
      const res = await server.call('PUT', '/v1/network/sso', { body });
      await expectProblem(res, 400, 'invalid_request');
    }
    expect(await json(await server.call('GET', '/v1/network/sso'))).toMatchObject({
      issuer: idp.issuer,
      clientId: idp.clientId,
    });
  });
});

describe('sign-in', () => {
  it('signs the owner in: session cookie, CSRF token, /v1/me, and an audit entry naming the person', async () => {
    const browser = new Browser();
    const callback = await toCallback(browser, '/devices?tag=tag:web');
    const res = await browser.get(callback);
    expect(res.status, await res.clone().text()).toBe(303);
    expect(res.headers.get('location')).toBe('/devices?tag=tag:web');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('warren_session='))!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    expect(cookie).not.toMatch(/Secure/); // plain http here
    const csrf = res.headers.get('x-csrf-token');
    expect(csrf).toBeTruthy();

    const me = await browser.get(`${server.url}/v1/me`);
    const body = await json(me);
    expect(me.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ type: 'user', scopes: ['all'], ownDevicesOnly: false, csrfToken: csrf, key: null });
    expect(body.user.loginName).toBe('owner@example.com');

    const entry = (await auditEntries(server)).find((e) => e.action === 'session.create');
    expect(entry).toMatchObject({ keyId: null, keyName: null, userLogin: 'owner@example.com' });
    expect(entry.userId).toBe(body.user.id);
    // The cookie holds only a random id: what is stored is its hash.
    const rows = await server.database.storage.db.selectFrom('sessions').select('secret_hash').execute();
    expect(rows.map((r) => r.secret_hash)).not.toContain(sessionOf(browser));
  });

  it('refuses a callback whose state was altered', async () => {
    const browser = new Browser();
    const callback = new URL(await toCallback(browser));
    callback.searchParams.set('state', `${callback.searchParams.get('state')}x`);
    await expectProblem(await browser.get(callback.href), 401, 'unauthenticated');
    expect(sessionOf(browser)).toBeUndefined();
  });

  it('refuses a callback from a browser that did not start the sign-in (a planted code)', async () => {
    const callback = await toCallback(new Browser());
    const victim = new Browser();
    await expectProblem(await victim.get(callback), 401, 'unauthenticated');
    expect(sessionOf(victim)).toBeUndefined();
  });

  it('accepts a callback once: a replayed code and state are refused', async () => {
    const browser = new Browser();
    const callback = await toCallback(browser);
    const state = browser.cookie(server.url, 'warren_sso_state')!;
    expect((await browser.get(callback)).status).toBe(303);
    browser.setCookie(server.url, 'warren_sso_state', state);
    await expectProblem(await browser.get(callback), 401, 'unauthenticated');
  });

  it('refuses an ID token signed by a key the issuer does not publish', async () => {
    const browser = new Browser();
    const callback = await toCallback(browser);
    idp.publishForeignKeys(true);
    const problem = await expectProblem(await browser.get(callback), 401, 'unauthenticated');
    expect(problem.detail).toMatch(/single sign-on failed/);
    expect(sessionOf(browser)).toBeUndefined();
  });

  it('refuses an expired ID token', async () => {
    const short = await startIdentityProvider({ redirectUri: `${server.url}/auth/callback`, idTokenTtlSeconds: 60 });
    try {
      await setSso({ issuer: short.issuer, clientId: short.clientId, clientSecret: short.clientSecret });
      const browser = new Browser();
      const callback = await toCallback(browser);
      // Five minutes on Warren's clock: the sign-in is still pending, the one-minute token is not valid.
      server.clock.advance(5 * 60_000);
      const problem = await expectProblem(await browser.get(callback), 401, 'unauthenticated');
      expect(problem.detail).toMatch(/exp|expired/i);
    } finally {
      await short.close();
    }
  });

  it('refuses an email the provider has not verified, and creates no user', async () => {
    await setSso({ allowedDomains: ['example.com'] });
    idp.signInAs({ email: 'unverified@example.com', emailVerified: false });
    const browser = new Browser();
    const problem = await expectProblem(await browser.get(await toCallback(browser)), 401, 'unauthenticated');
    expect(problem.detail).toMatch(/not verified/);
    const users = await json(await server.call('GET', '/v1/users'));
    expect(users.users.map((u: { loginName: string }) => u.loginName)).not.toContain('unverified@example.com');
  });

  it('refuses a stranger whose domain is not allowed, and makes a member of one whose domain is', async () => {
    idp.signInAs({ email: 'eve@elsewhere.test', emailVerified: true, name: 'Eve' });
    const eve = new Browser();
    await expectProblem(await eve.get(await toCallback(eve)), 403, 'access_denied');

    await setSso({ allowedDomains: ['example.com'] });
    idp.signInAs({ email: 'new.hire@example.com', emailVerified: true, name: 'New Hire' });
    const hire = new Browser();
    expect((await hire.get(await toCallback(hire))).status).toBe(303);
    const me = await json(await hire.get(`${server.url}/v1/me`));
    expect(me.user).toMatchObject({ loginName: 'new.hire@example.com', role: 'member', displayName: 'New Hire' });
    expect(me).toMatchObject({ scopes: [], ownDevicesOnly: true });
  });

  it('refuses a suspended user, and signs them in again once restored', async () => {
    const added = await server.call('POST', '/v1/users', { body: { loginName: 'paused@example.com' } });
    const { id } = await json(added);
    await server.call('PATCH', `/v1/users/${id}`, { body: { status: 'suspended' } });
    idp.signInAs({ email: 'paused@example.com', emailVerified: true });
    const refused = new Browser();
    const problem = await expectProblem(await refused.get(await toCallback(refused)), 401, 'unauthenticated');
    expect(problem.detail).toMatch(/suspended/);
    expect(sessionOf(refused)).toBeUndefined();
    await server.call('PATCH', `/v1/users/${id}`, { body: { status: 'active' } });
    const restored = new Browser();
    expect((await restored.get(await toCallback(restored))).status).toBe(303);
    expect((await json(await restored.get(`${server.url}/v1/me`))).user.loginName).toBe('paused@example.com');
  });

  it('keeps to the plan: no new member past the seats of the free plan', async () => {
    await setSso({ allowedDomains: ['example.com'] });
    for (let i = 0; (await json(await server.call('GET', '/v1/users'))).users.length < 3; i++) {
      await server.call('POST', '/v1/users', { body: { loginName: `seat${i}@example.com` } });
    }
    idp.signInAs({ email: 'one.too.many@example.com', emailVerified: true });
    const browser = new Browser();
    await expectProblem(await browser.get(await toCallback(browser)), 403, 'plan_limit');
  });

  for (const returnTo of [
    '//evil.example',
    'https://evil.example/',
    '/\\evil.example',
    '/%2F/evil.example',
    'javascript:alert(1)',
  ]) {
    it(`redirects to / instead of ${JSON.stringify(returnTo)}`, async () => {
      const browser = new Browser();
      const res = await browser.get(await toCallback(browser, returnTo));
      expect(res.status).toBe(303);
      const location = res.headers.get('location')!;
      expect(new URL(location, server.url).origin).toBe(new URL(server.url).origin);
      expect(location.startsWith('//')).toBe(false);
    });
  }

  it('answers an unknown network with a problem', async () => {
    await expectProblem(await fetch(`${server.url}/auth/login?network=nope`, { redirect: 'manual' }), 404, 'not_found');
  });

  it('shows a person the sign-in page naming what went wrong, where a script gets the problem', async () => {
    const page = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' };
    const problemOf = (res: Response) => {
      expect(res.status).toBe(303);
      return res.headers.get('location');
    };
    const unknown = await fetch(`${server.url}/auth/login?network=nope`, { redirect: 'manual', headers: page });
    expect(problemOf(unknown)).toBe('/signin?problem=sso_network');
    // A callback this browser did not start, or a replayed one.
    const planted = await toCallback(new Browser());
    expect(problemOf(await new Browser().get(planted, { headers: page }))).toBe('/signin?problem=sso_restart');
    // The provider's token cannot be trusted.
    const forged = new Browser();
    const forgedCallback = await toCallback(forged);
    idp.publishForeignKeys(true);
    expect(problemOf(await forged.get(forgedCallback, { headers: page }))).toBe('/signin?problem=sso_failed');
    idp.publishForeignKeys(false);
    // Signed in by the provider, but no one the network knows or takes.
    idp.signInAs({ email: 'eve@elsewhere.test', emailVerified: true });
    const eve = new Browser();
    expect(problemOf(await eve.get(await toCallback(eve), { headers: page }))).toBe('/signin?problem=sso_denied');
    // The free plan's seats are taken by now: suspend a user the network has.
    const { users } = await json(await server.call('GET', '/v1/users'));
    const member = users.find((u: { role: string }) => u.role !== 'owner');
    await server.call('PATCH', `/v1/users/${member.id}`, { body: { status: 'suspended' } });
    idp.signInAs({ email: member.loginName, emailVerified: true });
    const held = new Browser();
    expect(problemOf(await held.get(await toCallback(held), { headers: page }))).toBe('/signin?problem=sso_inactive');
    expect(sessionOf(held)).toBeUndefined();
    await server.call('PATCH', `/v1/users/${member.id}`, { body: { status: 'active' } });
  });
});

/**
 * The contract's role table for console sessions, held against every operation of the served
 * OpenAPI document, reads included: for each role a signed-in person either passes the
 * permission check or is refused with 403 insufficient_scope naming what the call needs. A
 * member holds no scope: they read and delete their own devices and ask who they are, nothing
 * else. Every unsafe method of a session needs its CSRF token; a key never does. The table is
 * written out here from API.md, not imported, so a change to the server's own table shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, expectProblem } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import type { Browser } from './browser.js';
import { addUser, signIn } from './sign-in.js';

/** API.md, "People: console sessions, single sign-on and SCIM". */
const ROLE_SCOPES: Record<string, string[]> = {
  owner: ['all'],
  admin: ['all'],
  'network-admin': ['read', 'acls', 'devices'],
  'it-admin': ['read', 'devices', 'keys', 'users'],
  auditor: ['read'],
  member: [],
};

/** What a member may call: their own devices (read, delete) and who they are. */
const MEMBER_CALLS = new Set(['GET /v1/me', 'GET /v1/devices', 'GET /v1/devices/{id}', 'DELETE /v1/devices/{id}']);

/** The scope of a resource (API.md, "Authentication and scopes"): the connection log is the devices'. */
function scopeFor(path: string): string {
  if (path.startsWith('/v1/devices') || path.startsWith('/v1/routes') || path === '/v1/logs/connections')
    return 'devices';
  if (path.startsWith('/v1/acl')) return 'acls';
  if (path.startsWith('/v1/keys')) return 'keys';
  if (path.startsWith('/v1/users')) return 'users';
  if (path.startsWith('/v1/webhooks')) return 'webhooks';
  // The network's settings and single sign-on: only `all`.
  return 'all';
}

const SAFE = new Set(['GET', 'HEAD']);

/** Whether a person of a role may make a call, by the contract. */
function allowed(role: string, method: string, path: string): boolean {
  if (role === 'member') return MEMBER_CALLS.has(`${method} ${path}`);
  const scopes = ROLE_SCOPES[role]!;
  if (scopes.includes('all')) return true;
  if (SAFE.has(method)) return true; // every other role reads
  return scopes.includes(scopeFor(path));
}

type Operation = { method: string; path: string };
type Person = { role: string; id: string; login: string; browser: Browser; csrf: string };

let server: TestServer;
let operations: Operation[];
const people: Person[] = [];

beforeAll(async () => {
  server = await startServer();
  const document = await json(await server.call('GET', '/v1/openapi.json'));
  operations = Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, ops]) =>
    Object.keys(ops)
      .filter((method) => !['head', 'parameters'].includes(method))
      // Devices' own calls take node credentials, not a person's session.
      .filter(() => !path.startsWith('/v1/node/'))
      .map((method) => ({ method: method.toUpperCase(), path })),
  );
  for (const role of Object.keys(ROLE_SCOPES)) {
    const login = `${role}-person@example.com`;
    const id = await addUser(server, login, role);
    people.push({ role, id, login, ...(await signIn(server, id)) });
  }
});
afterAll(() => server?.close());

/** One call of a person's session, with its CSRF token unless told otherwise (and `{}` as an unsafe call's body). */
function sessionCall(
  person: Person,
  method: string,
  url: string,
  csrf: string | null = person.csrf,
  body: unknown = {},
) {
  return fetch(`${server.url}${url}`, {
    method,
    headers: {
      cookie: `warren_session=${person.browser.cookie(server.url, 'warren_session')}`,
      ...(SAFE.has(method) ? {} : { 'content-type': 'application/json' }),
      ...(csrf === null ? {} : { 'x-csrf-token': csrf }),
    },
    ...(SAFE.has(method) ? {} : { body: JSON.stringify(body) }),
  });
}

type AuditEntry = {
  requestId: string;
  userId: string | null;
  userLogin: string | null;
  keyId: string | null;
  status: number;
};

/** The whole audit log, page by page: the sweep writes more entries than one page holds. */
async function auditLog(): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let query = 'since=24h&limit=1000';
  for (;;) {
    const page = await json(await server.call('GET', `/v1/logs/audit?${query}`));
    entries.push(...page.entries);
    if (!page.hasMore) return entries;
    query = `cursor=${encodeURIComponent(page.nextCursor)}&limit=1000`;
  }
}

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'unknown_0');

async function problemOf(res: Response): Promise<{ code?: string; scope?: string }> {
  return res.headers.get('content-type')?.includes('json') && res.status !== 204 ? json(res) : {};
}

describe('the role table of console sessions', () => {
  it('finds the operations in the served document, reads included', () => {
    expect(operations.length).toBeGreaterThanOrEqual(40);
    expect(operations).toContainEqual({ method: 'GET', path: '/v1/logs/audit' });
    expect(operations).toContainEqual({ method: 'PUT', path: '/v1/acl' });
  });

  it('lets each role do what the table gives it and refuses the rest with insufficient_scope', async () => {
    const wrong: string[] = [];
    for (const person of people) {
      for (const { method, path } of operations) {
        const res = await sessionCall(person, method, concrete(path));
        const body = await problemOf(res);
        const refused = res.status === 403 && body.code === 'insufficient_scope';
        const said = `${person.role} ${method} ${path}: ${res.status} ${body.code ?? ''} ${body.scope ?? ''}`;
        if (res.status === 401 || res.status >= 500 || body.code === 'csrf_failed') wrong.push(said);
        else if (allowed(person.role, method, path)) {
          if (refused) wrong.push(said);
        } else if (!refused) {
          wrong.push(said);
        } else {
          // A change names its resource's scope; a read may name `read` or the resource's own.
          const named = SAFE.has(method) ? ['read', scopeFor(path)] : [scopeFor(path)];
          if (!named.includes(body.scope!)) wrong.push(said);
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('says what each role may do in GET /v1/me', async () => {
    for (const person of people) {
      const me = await json(await sessionCall(person, 'GET', '/v1/me'));
      expect(me, person.role).toMatchObject({
        type: 'user',
        key: null,
        user: { id: person.id, role: person.role },
        scopes: ROLE_SCOPES[person.role],
        ownDevicesOnly: person.role === 'member',
        csrfToken: person.csrf,
      });
    }
  });

  it('needs the CSRF token on every unsafe method of a session, whatever the role, and never of a key', async () => {
    const wrong: string[] = [];
    for (const person of people) {
      for (const { method, path } of operations.filter((o) => !SAFE.has(o.method))) {
        for (const csrf of [null, `${person.csrf}x`, '']) {
          const res = await sessionCall(person, method, concrete(path), csrf);
          const body = await problemOf(res);
          if (res.status !== 403 || body.code !== 'csrf_failed') {
            wrong.push(`${person.role} ${method} ${path} csrf=${csrf}: ${res.status} ${body.code}`);
          }
        }
      }
    }
    expect(wrong).toEqual([]);
    // The refusal is recorded under the person whose session the call carried.
    const member = people.find((p) => p.role === 'member')!;
    const forged = await fetch(`${server.url}/v1/devices/unknown_0`, {
      method: 'DELETE',
      headers: {
        cookie: `warren_session=${member.browser.cookie(server.url, 'warren_session')}`,
        'x-request-id': 'forged-delete-1',
      },
    });
    await expectProblem(forged, 403, 'csrf_failed');
    expect((await auditLog()).find((e) => e.requestId === 'forged-delete-1')).toMatchObject({
      status: 403,
      userId: member.id,
      userLogin: member.login,
      keyId: null,
    });
    // A key sends no CSRF token, even beside a session cookie: the key is the credential then.
    const owner = people.find((p) => p.role === 'owner')!;
    const withKey = await server.call('POST', '/v1/acl/validate', {
      body: {},
      headers: { cookie: `warren_session=${owner.browser.cookie(server.url, 'warren_session')}` },
    });
    expect(withKey.status).toBe(200);
  });

  it('names the person in the audit entry of every call, allowed or refused', async () => {
    const entries = await auditLog();
    for (const person of people) {
      const theirs = entries.filter((e) => e.userId === person.id);
      expect(theirs.length, person.role).toBeGreaterThan(operations.length);
      for (const entry of theirs) expect(entry).toMatchObject({ userLogin: person.login, keyId: null });
      expect(theirs.some((e) => e.status === 403) || person.role === 'owner' || person.role === 'admin').toBe(true);
    }
  });
});

describe("a member's own devices", () => {
  it('are all they read or delete; changing one is for those who manage devices', async () => {
    const member = people.find((p) => p.role === 'member')!;
    const mine = await enroll(server, (await createAuthKey(server, { user: member.id })).key);
    const theirs = await enroll(server, (await createAuthKey(server)).key);
    const listed = async (query: string) =>
      (await json(await sessionCall(member, 'GET', `/v1/devices${query}`))).devices.map((d: { id: string }) => d.id);
    // A filter naming someone else still lists the member's own devices only.
    expect(await listed('')).toEqual([mine.device.id]);
    expect(await listed(`?user=${encodeURIComponent('owner@example.com')}`)).toEqual([mine.device.id]);
    expect(await listed('?fields=all')).toEqual([mine.device.id]);
    await expectProblem(await sessionCall(member, 'GET', `/v1/devices/${theirs.device.id}`), 404, 'not_found');
    await expectProblem(await sessionCall(member, 'DELETE', `/v1/devices/${theirs.device.id}`), 404, 'not_found');
    const own = `/v1/devices/${mine.device.id}`;
    for (const [method, path] of [
      ['PATCH', own],
      ['POST', `${own}/tags`],
      ['POST', `${own}/approve`],
      ['POST', `${own}/expire`],
    ] as const) {
      const problem = await expectProblem(await sessionCall(member, method, path), 403, 'insufficient_scope');
      expect(problem.scope).toBe('devices');
    }
    await expectProblem(
      await sessionCall(member, 'GET', `/v1/routes?device=${mine.device.id}`),
      403,
      'insufficient_scope',
    );
    await expectProblem(
      await sessionCall(member, 'GET', `/v1/logs/connections?device=${mine.device.id}`),
      403,
      'insufficient_scope',
    );
    expect((await sessionCall(member, 'DELETE', own)).status).toBe(204);
    expect((await server.call('GET', `/v1/devices/${theirs.device.id}`)).status).toBe(200);
  });
});

describe('giving a role', () => {
  const patch = (person: Person, id: string, role: string) =>
    sessionCall(person, 'PATCH', `/v1/users/${id}`, person.csrf, { role });

  it('is only for whoever holds every scope of it, so no one raises themselves or demotes those above them', async () => {
    const it = people.find((p) => p.role === 'it-admin')!;
    const owner = people.find((p) => p.role === 'owner')!;
    const before = await json(await server.call('GET', '/v1/users'));
    for (const [role, scope] of [
      ['owner', 'all'],
      ['admin', 'all'],
      ['network-admin', 'acls'],
    ] as const) {
      const body = { loginName: `new-${role}@example.com`, role };
      const created = await sessionCall(it, 'POST', '/v1/users', it.csrf, body);
      expect((await expectProblem(created, 403, 'insufficient_scope')).scope, role).toBe(scope);
      expect((await expectProblem(await patch(it, it.id, role), 403, 'insufficient_scope')).scope).toBe(scope);
    }
    // Nor takes a role away from someone whose role they could not give, nor suspends or removes them.
    expect((await expectProblem(await patch(it, owner.id, 'member'), 403, 'insufficient_scope')).scope).toBe('all');
    const suspend = sessionCall(it, 'PATCH', `/v1/users/${owner.id}`, it.csrf, { status: 'suspended' });
    expect((await expectProblem(await suspend, 403, 'insufficient_scope')).scope).toBe('all');
    const remove = sessionCall(it, 'DELETE', `/v1/users/${owner.id}`, it.csrf);
    expect((await expectProblem(await remove, 403, 'insufficient_scope')).scope).toBe('all');
    expect(await json(await server.call('GET', '/v1/users'))).toEqual(before);
    // The refusals left the session as it was.
    expect((await sessionCall(it, 'GET', '/v1/me')).status).toBe(200);
    // Within their own scopes they manage people.
    for (const role of ['it-admin', 'auditor', 'member']) {
      const body = { loginName: `made-${role}@example.com`, role };
      expect((await sessionCall(it, 'POST', '/v1/users', it.csrf, body)).status, role).toBe(201);
    }
    const made = (await json(await server.call('GET', '/v1/users'))).users.find(
      (u: { loginName: string }) => u.loginName === 'made-member@example.com',
    );
    expect((await patch(it, made.id, 'auditor')).status).toBe(200);
    const suspendMade = (status: string) => sessionCall(it, 'PATCH', `/v1/users/${made.id}`, it.csrf, { status });
    expect((await suspendMade('suspended')).status).toBe(200);
    expect((await suspendMade('active')).status).toBe(200);
    expect((await sessionCall(it, 'DELETE', `/v1/users/${made.id}`, it.csrf)).status).toBe(204);
  });

  it('holds a key to the scope table instead: `users` suffices for every user call', async () => {
    const it = people.find((p) => p.role === 'it-admin')!;
    const res = await sessionCall(it, 'POST', '/v1/keys', it.csrf, {
      type: 'api',
      name: 'user-manager',
      scopes: ['users'],
      expiresIn: '1d',
    });
    expect(res.status).toBe(201);
    const key = (await json(res)).key;
    // Nor does a person give a key more than their role holds.
    for (const scope of ['acls', 'webhooks', 'all']) {
      const body = { type: 'api', name: `wider-${scope}`, scopes: ['read', scope], expiresIn: '1d' };
      const wider = await sessionCall(it, 'POST', '/v1/keys', it.csrf, body);
      expect((await expectProblem(wider, 403, 'insufficient_scope')).scope, scope).toBe(scope);
    }
    // The contract's table: `POST/PATCH/DELETE /v1/users…` need `users`, whatever the role.
    const member = { loginName: 'plain@example.com', role: 'member' };
    const plain = await server.call('POST', '/v1/users', { key, body: member });
    expect(plain.status).toBe(201);
    const raise = await server.call('PATCH', `/v1/users/${(await json(plain)).id}`, { key, body: { role: 'admin' } });
    expect(raise.status).toBe(200);
    expect((await json(raise)).role).toBe('admin');
    const owner = { loginName: 'second-owner@example.com', role: 'owner' };
    expect((await server.call('POST', '/v1/users', { key, body: owner })).status).toBe(201);
    // A key without `users` gives no role at all.
    const reader = (
      await json(
        await server.call('POST', '/v1/keys', {
          body: { type: 'api', name: 'reader', scopes: ['read'], expiresIn: '1d' },
        }),
      )
    ).key;
    const auditor = { loginName: 'reader@example.com', role: 'auditor' };
    const refused = await server.call('POST', '/v1/users', { key: reader, body: auditor });
    expect((await expectProblem(refused, 403, 'insufficient_scope')).scope).toBe('users');
  });
});

/**
 * SCIM 2.0 driven as Okta and Entra ID drive it: look a person up by userName, create them,
 * deactivate with each identity provider's PATCH dialect, reactivate, and offboard.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, heartbeat } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { signIn } from './sign-in.js';

let server: TestServer;
let usersKey: string;
let readKey: string;

async function apiKey(scopes: string[]): Promise<string> {
  const res = await server.call('POST', '/v1/keys', { body: { type: 'api', name: scopes.join('-'), scopes } });
  return (await json(res)).key;
}

function scim(method: string, path: string, body?: unknown, key = usersKey) {
  return fetch(`${server.url}/scim/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function expectScimError(res: Response, status: number, scimType?: string) {
  expect(res.headers.get('content-type')).toContain('application/scim+json');
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(status);
  expect(body.schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error']);
  expect(body.status).toBe(String(status));
  if (scimType) expect(body.scimType).toBe(scimType);
  return body;
}

beforeAll(async () => {
  server = await startServer({ plan: 'free' });
  usersKey = await apiKey(['users']);
  readKey = await apiKey(['read']);
});
afterAll(() => server?.close());

describe('SCIM', () => {
  it('describes itself', async () => {
    const config = await scim('GET', '/ServiceProviderConfig');
    expect(config.status).toBe(200);
    expect(config.headers.get('content-type')).toContain('application/scim+json');
    expect((await json(config)).patch.supported).toBe(true);
    expect((await json(await scim('GET', '/ResourceTypes'))).Resources[0].endpoint).toBe('/Users');
    expect((await json(await scim('GET', '/Schemas'))).Resources[0].id).toBe(
      'urn:ietf:params:scim:schemas:core:2.0:User',
    );
  });

  it('serves the schema and resource type its listings link to (RFC 7644 §4)', async () => {
    for (const listing of ['/Schemas', '/ResourceTypes']) {
      const [listed] = (await json(await scim('GET', listing))).Resources;
      const location = new URL(listed.meta.location);
      const res = await scim('GET', location.pathname.slice('/scim/v2'.length));
      expect(res.status, location.pathname).toBe(200);
      expect(res.headers.get('content-type')).toContain('application/scim+json');
      expect(await json(res)).toEqual(listed);
    }
    await expectScimError(await scim('GET', '/Schemas/urn:ietf:params:scim:schemas:core:2.0:Group'), 404);
    await expectScimError(await scim('GET', '/ResourceTypes/Group'), 404);
  });

  it('refuses an unknown path or method in its own error shape', async () => {
    await expectScimError(await scim('GET', '/Groups'), 404);
    const patch = await scim('PATCH', '/Users', { Operations: [] });
    expect(patch.headers.get('allow')).toBe('GET, HEAD, POST');
    await expectScimError(patch, 405);
    await expectScimError(await scim('POST', '/Users/usr_x', {}), 405);
  });

  it('needs an API key with scope users', async () => {
    await expectScimError(await scim('GET', '/Users', undefined, readKey), 403);
    await expectScimError(await fetch(`${server.url}/scim/v2/Users`), 401);
  });

  it('provisions, suspends and restores as Okta does, and offboards', async () => {
    const lookup = await json(
      await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "ana@example.com"')}`),
    );
    expect(lookup).toMatchObject({ totalResults: 0, Resources: [] });
    const created = await scim('POST', '/Users', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'Ana@example.com',
      name: { givenName: 'Ana', familyName: 'Lima' },
      emails: [{ primary: true, value: 'ana@example.com', type: 'work' }],
      active: true,
    });
    const ana = await json(created);
    expect(created.status, JSON.stringify(ana)).toBe(201);
    expect(created.headers.get('location')).toBe(`${server.url}/scim/v2/Users/${ana.id}`);
    expect(ana.meta.location).toBe(created.headers.get('location'));
    expect(ana).toMatchObject({ userName: 'ana@example.com', displayName: 'Ana Lima', active: true });
    await expectScimError(await scim('POST', '/Users', { userName: 'ana@example.com' }), 409, 'uniqueness');

    const device = await enroll(server, (await createAuthKey(server, { user: ana.id })).key);
    const session = await signIn(server, ana.id);
    const off = await scim('PATCH', `/Users/${ana.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', value: { active: false } }],
    });
    expect((await json(off)).active).toBe(false);
    expect((await heartbeat(server, device.nodeToken)).status).toBe(401);
    // Her console session ended with the suspension.
    expect((await session.browser.get(`${server.url}/v1/me`)).status).toBe(401);
    const user = await json(await server.call('GET', '/v1/users'));
    expect(user.users.find((u: { id: string }) => u.id === ana.id).status).toBe('suspended');

    const on = await scim('PATCH', `/Users/${ana.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [{ op: 'replace', path: 'active', value: true }],
    });
    expect((await json(on)).active).toBe(true);
    expect((await heartbeat(server, device.nodeToken)).status).toBe(200);

    const put = await scim('PUT', `/Users/${ana.id}`, {
      userName: 'ana@example.com',
      displayName: 'Ana L.',
      active: true,
    });
    expect((await json(put)).displayName).toBe('Ana L.');

    expect((await scim('DELETE', `/Users/${ana.id}`)).status).toBe(204);
    await expectScimError(await scim('GET', `/Users/${ana.id}`), 404);
    expect((await server.call('GET', `/v1/devices/${device.device.id}`)).status).toBe(404);
    // Keys are never touched by provisioning.
    expect((await scim('GET', '/Users')).status).toBe(200);
  });

  it('provisions a person already deactivated as one change: one user.created, suspended', async () => {
    const start = (await json(await server.call('GET', '/v1/events?since=1d&limit=1000'))).nextCursor;
    const created = await scim('POST', '/Users', { userName: 'gone@example.com', active: false });
    const gone = await json(created);
    expect(created.status, JSON.stringify(gone)).toBe(201);
    expect(gone.active).toBe(false);
    const events = (await json(await server.call('GET', `/v1/events?cursor=${start}&type=user.*`))).entries;
    expect(events.map((e: { type: string }) => e.type)).toEqual(['user.created']);
    expect(events[0].data.user).toMatchObject({ id: gone.id, status: 'suspended' });
    expect((await scim('DELETE', `/Users/${gone.id}`)).status).toBe(204);
  });

  it('reads Entra ID: "Replace", string booleans, displayName by path', async () => {
    const bo = await json(await scim('POST', '/Users', { userName: 'bo@example.com', active: true }));
    const res = await scim('PATCH', `/Users/${bo.id}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'Replace', path: 'active', value: 'False' },
        { op: 'Replace', path: 'displayName', value: 'Bo B' },
        { op: 'Add', path: 'name.givenName', value: 'Bo' },
      ],
    });
    expect(await json(res)).toMatchObject({ active: false, displayName: 'Bo B' });
    await expectScimError(
      await scim('PATCH', `/Users/${bo.id}`, { Operations: [{ op: 'remove', path: 'active' }] }),
      400,
      'invalidValue',
    );
    // RFC 7644 §3.5.2.2: remove takes a path; attributes Warren does not keep are removed as no-ops,
    // and a removed display name gives the default back.
    const removed = await scim('PATCH', `/Users/${bo.id}`, {
      Operations: [
        { op: 'Remove', path: 'name.givenName' },
        { op: 'remove', path: 'emails[type eq "work"].value' },
        { op: 'remove', path: 'displayName' },
      ],
    });
    expect(removed.status).toBe(200);
    expect(await json(removed)).toMatchObject({ active: false, displayName: 'bo' });
    await expectScimError(await scim('PATCH', `/Users/${bo.id}`, { Operations: [{ op: 'remove' }] }), 400, 'noTarget');
    await expectScimError(
      await scim('PATCH', `/Users/${bo.id}`, { Operations: [{ op: 'remove', path: 'userName' }] }),
      400,
      'mutability',
    );
    await expectScimError(
      await scim('PATCH', `/Users/${bo.id}`, { Operations: [{ op: 'remove', path: 'title' }] }),
      400,
      'invalidPath',
    );
    await expectScimError(
      await scim('PATCH', `/Users/${bo.id}`, { Operations: [{ op: 'replace', path: 'active', value: 'maybe' }] }),
      400,
      'invalidValue',
    );
    await expectScimError(await scim('GET', '/Users?filter=displayName co "x"'), 400, 'invalidFilter');
  });

  it('pages with startIndex and count, and keeps the seats and the last owner', async () => {
    const page = await json(await scim('GET', '/Users?startIndex=2&count=1'));
    expect(page).toMatchObject({ startIndex: 2, itemsPerPage: 1 });
    expect(page.totalResults).toBeGreaterThanOrEqual(2);
    // RFC 7644 §3.4.2.4: a startIndex below 1 is read as 1, a negative count as 0.
    const first = await json(await scim('GET', '/Users?startIndex=1&count=1'));
    for (const startIndex of ['0', '-1', '-5']) {
      const res = await scim('GET', `/Users?startIndex=${startIndex}&count=1`);
      expect(res.status, startIndex).toBe(200);
      expect(await json(res)).toMatchObject({ startIndex: 1, Resources: first.Resources });
    }
    for (const count of ['0', '-1']) {
      const res = await scim('GET', `/Users?count=${count}`);
      expect(res.status, count).toBe(200);
      expect(await json(res)).toMatchObject({ totalResults: page.totalResults, itemsPerPage: 0, Resources: [] });
    }
    for (const bad of ['x', '1.5', '0x1', '+1', '']) {
      await expectScimError(await scim('GET', `/Users?startIndex=${bad}`), 400, 'invalidValue');
      await expectScimError(await scim('GET', `/Users?count=${bad}`), 400, 'invalidValue');
    }
    // free plan: 3 seats (owner, bo, and one more)
    expect((await scim('POST', '/Users', { userName: 'cy@example.com' })).status).toBe(201);
    await expectScimError(await scim('POST', '/Users', { userName: 'dee@example.com' }), 403);
    const owner = (
      await json(await scim('GET', `/Users?filter=${encodeURIComponent('userName eq "owner@example.com"')}`))
    ).Resources[0];
    await expectScimError(
      await scim('PATCH', `/Users/${owner.id}`, { Operations: [{ op: 'replace', path: 'active', value: false }] }),
      409,
    );
    await expectScimError(await scim('DELETE', `/Users/${owner.id}`), 409);
  });
});

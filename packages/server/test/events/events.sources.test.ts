/** Every service that changes state announces it: keys, routes, the policy, enrollment. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, heartbeat } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { eventPage } from './helpers.js';

describe('events of keys, routes, the policy and enrollment', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { eventDetectorIntervalMs: 3_600_000 } });
  });
  afterAll(() => server.close());

  it('announces each transition once, in commit order, without secrets', async () => {
    const start = (await eventPage(server)).nextCursor;
    const authKey = await createAuthKey(server, { reusable: true });
    const device = await enroll(server, authKey.key, { hostname: 'gw-1', advertiseRoutes: ['10.9.0.0/24'] });
    const routeId = device.device.routes[0].id;
    expect((await server.call('POST', `/v1/routes/${routeId}/approve`)).status).toBe(200);
    const current = await server.call('GET', '/v1/acl');
    const etag = current.headers.get('etag');
    const policy = await server.call('PUT', '/v1/acl', {
      raw: await current.text(),
      headers: { 'content-type': 'application/json' },
    });
    expect(policy.status).toBe(200);
    expect((await server.call('DELETE', `/v1/keys/${authKey.id}`)).status).toBe(204);

    const { entries } = await eventPage(server, `?cursor=${start}`);
    expect(entries.map((e) => e.type)).toEqual([
      'key.created',
      'device.created',
      'route.advertised',
      'route.approved',
      'policy.updated',
      'key.deleted',
    ]);
    const [created, enrolled, advertised, approved, updated, deleted] = entries;
    expect(created.data.key).toMatchObject({ id: authKey.id, type: 'auth' });
    expect(created.data.key.key).toBeUndefined();
    expect(JSON.stringify(entries)).not.toContain(authKey.key);
    // A device names itself in what it causes, as a key or a person does (and as a Tailscale client's device does).
    expect(enrolled.actor).toEqual({ type: 'device', id: device.device.id, name: 'gw-1' });
    expect(enrolled.data.device).toMatchObject({ id: device.device.id, hostname: 'gw-1' });
    expect(advertised.data.route).toMatchObject({ id: routeId, state: 'pending' });
    expect(approved.data.route).toMatchObject({ id: routeId, state: 'approved' });
    expect(approved.actor.type).toBe('key');
    expect(updated.data).toEqual({ etag: policy.headers.get('etag'), version: 2 });
    expect(updated.data.etag).not.toBe(etag);
    expect(deleted.data.key).toMatchObject({ id: authKey.id, state: 'revoked' });
  });

  it('names the device in the events its own calls cause', async () => {
    const authKey = await createAuthKey(server, { reusable: true });
    const device = await enroll(server, authKey.key, { hostname: 'edge-1' });
    const start = (await eventPage(server)).nextCursor;
    expect((await heartbeat(server, device.nodeToken, { advertiseRoutes: ['10.11.0.0/24'] })).status).toBe(200);
    const { entries } = await eventPage(server, `?cursor=${start}&type=route.advertised`);
    expect(entries.map((e) => e.actor)).toEqual([{ type: 'device', id: device.device.id, name: 'edge-1' }]);
  });

  it('announces a route disabled and approved again, and nothing for a refused transition', async () => {
    const authKey = await createAuthKey(server, { reusable: true });
    const device = await enroll(server, authKey.key, { hostname: 'gw-2', advertiseRoutes: ['10.8.0.0/24'] });
    const routeId = device.device.routes[0].id;
    const start = (await eventPage(server)).nextCursor;
    const act = async (action: string) => (await server.call('POST', `/v1/routes/${routeId}/${action}`)).status;
    expect([await act('approve'), await act('disable'), await act('disable'), await act('approve')]).toEqual([
      200, 200, 409, 200,
    ]);
    const { entries } = await eventPage(server, `?cursor=${start}&type=route.*`);
    expect(entries.map((e) => [e.type, e.data.route.state])).toEqual([
      ['route.approved', 'approved'],
      ['route.disabled', 'disabled'],
      ['route.approved', 'approved'],
    ]);
  });

  it('announces nothing for a policy refused as invalid', async () => {
    const before = (await eventPage(server, '?since=1d')).entries.length;
    const refused = await server.call('PUT', '/v1/acl', {
      raw: '{"acls": [{"action": "drop"}]}',
      headers: { 'content-type': 'application/json' },
    });
    expect(refused.status).toBe(400);
    expect((await json(refused)).code).toBe('policy_invalid');
    expect((await eventPage(server, '?since=1d')).entries).toHaveLength(before);
  });

  it("announces each of a removed user's devices as deleted, with its record as it last was", async () => {
    const ana = await json(await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com' } }));
    const authKey = (await createAuthKey(server, { reusable: true, user: ana.id })).key;
    const router = await enroll(server, authKey, { hostname: 'ana-gw', advertiseRoutes: ['10.7.0.0/24'] });
    const laptop = await enroll(server, authKey, { hostname: 'ana-laptop' });
    const start = (await eventPage(server)).nextCursor;
    expect((await server.call('DELETE', `/v1/users/${ana.id}`)).status).toBe(204);
    const deleted = (await eventPage(server, `?cursor=${start}&type=device.deleted`)).entries;
    expect(deleted.map((e) => e.data.device.id).sort()).toEqual([router.device.id, laptop.device.id].sort());
    const gw = deleted.find((e) => e.data.device.id === router.device.id).data.device;
    expect(gw).toMatchObject({ hostname: 'ana-gw', user: { id: ana.id } });
    expect(gw.routes.map((r: { prefix: string }) => r.prefix)).toEqual(['10.7.0.0/24']);
  });
});

/**
 * Another network's key sees none of this network: every resource answers 404 (never 403,
 * never a hint that the id exists), lists and logs come back empty, and nothing changes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, expectProblem, getDevice, nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

describe("another network's key", () => {
  let server: TestServer;
  let other: { networkId: string; apiKey: string };
  let device: any;
  let routeId: string;
  let userId: string;
  let keyId: string;
  beforeAll(async () => {
    server = await startServer();
    other = await server.addNetwork();
    const authKey = await createAuthKey(server, { reusable: true });
    keyId = authKey.id;
    const enrolled = await enroll(server, authKey.key, { hostname: 'mine', advertiseRoutes: ['10.7.0.0/24'] });
    device = enrolled.device;
    const peer = await enroll(server, authKey.key, { hostname: 'peer' });
    const [route] = (await json(await server.call('GET', `/v1/routes?device=${device.id}`))).routes;
    routeId = route.id;
    expect((await server.call('POST', `/v1/routes/${routeId}/approve`)).status).toBe(200);
    userId = (await json(await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com' } }))).id;
    const now = new Date(server.clock.now()).toISOString();
    const reported = await nodeCall(server, enrolled.nodeToken, 'connections', {
      entries: [
        {
          start: now,
          end: now,
          proto: 'tcp',
          src: { addr: `${device.addresses[0]}:51234` },
          dst: { addr: `${peer.device.addresses[0]}:443` },
          txBytes: 1,
          rxBytes: 2,
          txPackets: 1,
          rxPackets: 1,
        },
      ],
    });
    expect(reported.status, await reported.text()).toBe(202);
  });
  afterAll(() => server.close());

  const as = (method: string, path: string, body?: unknown) => server.call(method, path, { key: other.apiKey, body });

  it.each([
    ['GET', '/v1/devices/{id}', () => `/v1/devices/${device.id}`, undefined],
    ['DELETE', '/v1/devices/{id}', () => `/v1/devices/${device.id}`, undefined],
    ['POST', '/v1/devices/{id}/tags', () => `/v1/devices/${device.id}/tags`, { tags: [] }],
    ['POST', '/v1/routes/{id}/disable', () => `/v1/routes/${routeId}/disable`, undefined],
    ['POST', '/v1/routes/{id}/approve', () => `/v1/routes/${routeId}/approve`, undefined],
    ['GET', '/v1/keys/{id}', () => `/v1/keys/${keyId}`, undefined],
    ['DELETE', '/v1/keys/{id}', () => `/v1/keys/${keyId}`, undefined],
    ['PATCH', '/v1/users/{id}', () => `/v1/users/${userId}`, { role: 'auditor' }],
    ['DELETE', '/v1/users/{id}', () => `/v1/users/${userId}`, undefined],
  ])('answers 404 not_found to %s %s', async (method, _label, path, body) => {
    const problem = await expectProblem(await as(method, path(), body), 404, 'not_found');
    expect(JSON.stringify(problem)).not.toContain('mine');
  });

  it('lists nothing of this network', async () => {
    expect((await json(await as('GET', '/v1/devices'))).devices).toEqual([]);
    expect((await json(await as('GET', '/v1/routes'))).routes).toEqual([]);
    expect((await json(await as('GET', `/v1/routes?device=${device.id}`))).routes).toEqual([]);
    const users = (await json(await as('GET', '/v1/users'))).users.map((u: { id: string }) => u.id);
    expect(users).not.toContain(userId);
    const keys = (await json(await as('GET', '/v1/keys'))).keys.map((k: { id: string }) => k.id);
    expect(keys).not.toContain(keyId);
    expect((await json(await as('GET', '/v1/logs/connections?since=1h'))).entries).toEqual([]);
    expect((await json(await as('GET', `/v1/logs/connections?since=1h&device=${device.id}`))).entries).toEqual([]);
  });

  it('changed nothing with all those refused calls', async () => {
    const mine = await getDevice(server, device.id);
    expect(mine.status).toBe(200);
    expect(mine.body.tags).toEqual([]);
    expect(mine.body.routes).toEqual([expect.objectContaining({ id: routeId, state: 'approved' })]);
    expect(await json(await server.call('GET', `/v1/keys/${keyId}`))).toMatchObject({ state: 'valid' });
    const users = (await json(await server.call('GET', '/v1/users'))).users;
    expect(users.find((u: { id: string }) => u.id === userId)).toMatchObject({ role: 'member' });
    const log = (await json(await server.call('GET', '/v1/logs/connections?since=1h'))).entries;
    expect(log).toHaveLength(1);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPolicy } from '../acl/helpers.js';
import { auditEntries, createAuthKey, enroll, heartbeat, netmapEpoch } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

const policy = (autoApprovers: string) => `{
  "tagOwners": { "tag:router": ["autogroup:admin"] },
  "acls": [{ "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] }],
  "autoApprovers": ${autoApprovers},
}`;

describe('autoApprovers', () => {
  let server: TestServer;
  let routerKey: string;
  let plainKey: string;
  const routesOf = async (deviceId: string) => {
    const res = await server.call('GET', `/v1/routes?device=${deviceId}`);
    return Object.fromEntries(((await json(res)).routes as any[]).map((r) => [r.prefix, r]));
  };
  const approvals = async () => {
    await server.app.ctx.audit.flush();
    return (await auditEntries(server)).filter((e) => e.action === 'route.approve');
  };
  beforeAll(async () => {
    server = await startServer();
    await applyPolicy(server, policy(`{ "routes": { "10.0.0.0/8": ["tag:router"] }, "exitNode": ["tag:router"] }`));
    routerKey = (await createAuthKey(server, { reusable: true, tags: ['tag:router'] })).key;
    plainKey = (await createAuthKey(server, { reusable: true })).key;
  });
  afterAll(() => server.close());

  it('approves at enrollment what they allow for the device, and nothing else', async () => {
    const { device } = await enroll(server, routerKey, {
      hostname: 'gw',
      advertiseRoutes: ['10.1.0.0/16', '192.168.0.0/24', '0.0.0.0/0', '::/0'],
    });
    const routes = await routesOf(device.id);
    expect(routes['10.1.0.0/16']).toMatchObject({
      state: 'approved',
      autoApproved: true,
      approvedBy: 'autoApprovers',
      approvedAt: expect.any(String),
      primary: true,
    });
    // Approved by the very call that advertised it: same time as its creation, and as its audit entry.
    expect(routes['10.1.0.0/16'].approvedAt).toBe(routes['10.1.0.0/16'].created);
    expect(routes['0.0.0.0/0']).toMatchObject({ state: 'approved', autoApproved: true });
    expect(routes['::/0']).toMatchObject({ state: 'approved', autoApproved: true });
    expect(routes['192.168.0.0/24']).toMatchObject({ state: 'pending', autoApproved: false, approvedBy: null });
    const audited = (await approvals()).filter((e) => e.deviceId === device.id);
    expect(audited.map((e) => e.target).sort()).toEqual(
      [routes['10.1.0.0/16'].id, routes['0.0.0.0/0'].id, routes['::/0'].id].sort(),
    );
    // Audited as part of the enrollment that advertised them: the device's call.
    expect(audited[0]).toMatchObject({ method: 'POST', path: '/v1/node/register', status: 201, keyId: null });
    expect(audited[0].time).toBe(routes['10.1.0.0/16'].created);
  });

  it('approves routes first advertised in a heartbeat', async () => {
    const { device, nodeToken } = await enroll(server, routerKey, { hostname: 'gw-beat' });
    expect((await heartbeat(server, nodeToken, { advertiseRoutes: ['10.2.0.0/24', '172.16.0.0/12'] })).status).toBe(
      200,
    );
    const routes = await routesOf(device.id);
    expect(routes['10.2.0.0/24']).toMatchObject({ state: 'approved', autoApproved: true });
    expect(routes['172.16.0.0/12'].state).toBe('pending');
    expect((await approvals()).map((e) => e.target)).toContain(routes['10.2.0.0/24'].id);
  });

  it('leaves routes of devices they do not name pending', async () => {
    const { device } = await enroll(server, plainKey, { hostname: 'laptop', advertiseRoutes: ['10.3.0.0/24'] });
    expect((await routesOf(device.id))['10.3.0.0/24'].state).toBe('pending');
  });

  it('approves pending routes when a new policy allows them, in the PUT, audited per route', async () => {
    const { device } = await enroll(server, plainKey, { hostname: 'home', advertiseRoutes: ['10.9.0.0/24'] });
    const gw = await enroll(server, routerKey, { hostname: 'gw-2', advertiseRoutes: ['10.8.0.0/24'] });
    const route = (await routesOf(device.id))['10.9.0.0/24'];
    expect(route.state).toBe('pending');
    // An approved route that an admin disables stays disabled whatever the policy says.
    const gwRoute = (await routesOf(gw.device.id))['10.8.0.0/24'];
    expect((await server.call('POST', `/v1/routes/${gwRoute.id}/disable`)).status).toBe(200);

    const epoch = await netmapEpoch(server);
    await applyPolicy(
      server,
      policy(`{ "routes": { "10.0.0.0/8": ["tag:router", "owner@example.com"] }, "exitNode": ["tag:router"] }`),
    );
    expect(await netmapEpoch(server)).toBeGreaterThan(epoch);
    expect((await routesOf(device.id))['10.9.0.0/24']).toMatchObject({
      state: 'approved',
      autoApproved: true,
      approvedBy: 'autoApprovers',
    });
    expect((await routesOf(device.id))['10.9.0.0/24'].approvedAt).not.toBeNull();
    expect((await routesOf(gw.device.id))['10.8.0.0/24'].state).toBe('disabled');
    // The laptop's 10.3.0.0/24 (same owner) is approved too; 172.16.0.0/12 is outside 10/8.
    const pending = (await json(await server.call('GET', '/v1/routes?state=pending'))).routes.map((r: any) => r.prefix);
    expect(pending.sort()).toEqual(['172.16.0.0/12', '192.168.0.0/24']);

    const entry = (await approvals()).find((e) => e.target === route.id);
    expect(entry).toMatchObject({ method: 'PUT', path: '/v1/acl', keyName: 'initial', status: 200 });
  });

  it('an approval by hand of a pending route is not marked automatic', async () => {
    const { device } = await enroll(server, plainKey, { hostname: 'manual', advertiseRoutes: ['192.168.9.0/24'] });
    const route = (await routesOf(device.id))['192.168.9.0/24'];
    const approved = await json(await server.call('POST', `/v1/routes/${route.id}/approve`));
    expect(approved).toMatchObject({ state: 'approved', autoApproved: false, approvedBy: 'initial' });
  });
});

describe('autoApprovers and default routes', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    // As in Tailscale: a routes prefix of 0.0.0.0/0 or ::/0 approves the subnets inside it, and
    // only exitNode approves the default routes themselves.
    await applyPolicy(server, policy(`{ "routes": { "0.0.0.0/0": ["tag:router"], "::/0": ["tag:router"] } }`));
  });
  afterAll(() => server.close());

  it('leaves an exit node pending that only the routes map names', async () => {
    const key = (await createAuthKey(server, { tags: ['tag:router'] })).key;
    const { device } = await enroll(server, key, {
      hostname: 'edge',
      advertiseRoutes: ['10.5.0.0/24', 'fd00:5::/64', '0.0.0.0/0', '::/0'],
    });
    const res = await server.call('GET', `/v1/routes?device=${device.id}`);
    const states = Object.fromEntries(((await json(res)).routes as any[]).map((r) => [r.prefix, r.state]));
    expect(states).toEqual({
      '10.5.0.0/24': 'approved',
      'fd00:5::/64': 'approved',
      '0.0.0.0/0': 'pending',
      '::/0': 'pending',
    });
    expect((await json(await server.call('GET', `/v1/devices/${device.id}`))).exitNode).toBe(false);
  });
});

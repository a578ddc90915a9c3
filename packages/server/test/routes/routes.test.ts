import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditEntries,
  countDevices,
  enroll,
  expectProblem,
  getDevice,
  heartbeat,
  netmapEpoch,
  nodeCall,
  register,
  startWithAuthKey,
} from '../devices/helpers.js';
import { json, type TestServer } from '../harness.js';

describe('subnet routes', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey({ keyTags: ['tag:router'] }));
  });
  afterAll(() => server.close());

  const routes = async (query = '', key?: string) => {
    const res = await server.call('GET', `/v1/routes${query}`, { key });
    expect(res.status).toBe(200);
    return (await json(res)).routes as any[];
  };
  const post = (id: string, verb: 'approve' | 'disable', key?: string) =>
    server.call('POST', `/v1/routes/${id}/${verb}`, { key });

  it('turns advertised prefixes into pending routes, canonical and unique per device', async () => {
    const { device } = await enroll(server, authKey, {
      hostname: 'gw-1',
      advertiseRoutes: ['10.0.0.0/24', '0.0.0.0/0', '::/0', 'FD12:0::/16', '10.0.0.0/24'],
    });
    const list = await routes(`?device=${device.id}`);
    expect(list.map((r) => r.prefix).sort()).toEqual(['0.0.0.0/0', '10.0.0.0/24', '::/0', 'fd12::/16']);
    expect(list[0]).toEqual({
      id: expect.stringMatching(/^rt_/),
      deviceId: device.id,
      deviceName: 'gw-1',
      prefix: expect.any(String),
      state: 'pending',
      advertised: true,
      autoApproved: false,
      primary: false,
      exitNode: ['0.0.0.0/0', '::/0'].includes(list[0].prefix),
      approvedAt: null,
      approvedBy: null,
      created: expect.any(String),
    });
    expect(
      list
        .filter((r) => r.exitNode)
        .map((r) => r.prefix)
        .sort(),
    ).toEqual(['0.0.0.0/0', '::/0']);
    expect((await routes('?device=gw-1')).length).toBe(4);
    expect((await getDevice(server, device.id)).body.routes).toHaveLength(4);
  });

  it('refuses prefixes with host bits, malformed ones and bare addresses, enrolling nothing', async () => {
    const before = await countDevices(server);
    for (const bad of ['10.0.0.1/24', '10.0.0.0/33', '300.0.0.0/8', 'banana', '10.0.0.5', 'fd00::1/8', '10.0.0.0/08']) {
      const body = await expectProblem(
        await register(server, authKey, { advertiseRoutes: [bad] }),
        400,
        'invalid_prefix',
      );
      expect(body.detail).toContain(bad);
    }
    expect(await countDevices(server)).toBe(before);
  });

  it('walks pending → approved → disabled → approved, with 409 for the rest', async () => {
    const { device } = await enroll(server, authKey, { hostname: 'gw-states', advertiseRoutes: ['192.168.10.0/24'] });
    const [route] = await routes(`?device=${device.id}`);
    await expectProblem(await post(route.id, 'disable'), 409, 'invalid_state');

    const epoch = await netmapEpoch(server);
    let res = await post(route.id, 'approve');
    expect(res.status).toBe(200);
    const approved = await json(res);
    expect(approved).toMatchObject({ state: 'approved', approvedBy: 'initial', advertised: true, primary: true });
    expect(approved.approvedAt).not.toBeNull();
    expect(await netmapEpoch(server)).toBeGreaterThan(epoch);
    await expectProblem(await post(route.id, 'approve'), 409, 'invalid_state');

    res = await post(route.id, 'disable');
    expect(await json(res)).toMatchObject({ state: 'disabled', primary: false });
    await expectProblem(await post(route.id, 'disable'), 409, 'invalid_state');

    server.clock.advance(1000);
    res = await post(route.id, 'approve');
    const again = await json(res);
    expect(again.state).toBe('approved');
    expect(Date.parse(again.approvedAt)).toBeGreaterThan(Date.parse(approved.approvedAt));

    expect((await routes('?state=approved')).map((r) => r.id)).toContain(route.id);
    expect((await routes('?state=pending')).map((r) => r.id)).not.toContain(route.id);

    const actions = (await auditEntries(server)).filter((e) => e.target === route.id).map((e) => e.action);
    expect(actions).toEqual(['route.approve', 'route.disable', 'route.approve']);
  });

  it('answers 404 for unknown routes and other networks, 403 without the devices scope', async () => {
    await expectProblem(await post('rt_nope', 'approve'), 404, 'not_found');
    const { device } = await enroll(server, authKey, { hostname: 'gw-private', advertiseRoutes: ['172.16.0.0/12'] });
    const [route] = await routes(`?device=${device.id}`);
    const other = await server.addNetwork();
    await expectProblem(await post(route.id, 'approve', other.apiKey), 404, 'not_found');
    expect(await routes('', other.apiKey)).toEqual([]);
    const reader = (
      await json(await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'reader', scopes: ['read'] } }))
    ).key;
    expect((await routes('', reader)).length).toBeGreaterThan(0);
    await expectProblem(await post(route.id, 'approve', reader), 403, 'insufficient_scope');
    expect((await routes(`?device=${device.id}`))[0].state).toBe('pending');
    await expectProblem(await server.call('GET', '/v1/routes?state=bogus'), 400, 'invalid_request');
    await expectProblem(await server.call('GET', '/v1/routes?device='), 400, 'invalid_request');
  });

  it('keeps the state of a withdrawn route with advertised: false, and flips it back', async () => {
    const { device, nodeToken } = await enroll(server, authKey, {
      hostname: 'gw-flappy',
      advertiseRoutes: ['10.20.0.0/16', '10.21.0.0/16'],
    });
    const first = (await routes(`?device=${device.id}`)).find((r) => r.prefix === '10.20.0.0/16');
    expect((await post(first.id, 'approve')).status).toBe(200);

    // heartbeats without advertiseRoutes leave the set alone
    expect((await heartbeat(server, nodeToken)).status).toBe(200);
    expect((await routes(`?device=${device.id}`)).map((r) => r.advertised)).toEqual([true, true]);

    expect((await heartbeat(server, nodeToken, { advertiseRoutes: ['10.21.0.0/16'] })).status).toBe(200);
    let list = await routes(`?device=${device.id}`);
    const byPrefix = Object.fromEntries(list.map((r) => [r.prefix, r]));
    expect(byPrefix['10.20.0.0/16']).toMatchObject({ state: 'approved', advertised: false, primary: false });
    expect(byPrefix['10.21.0.0/16']).toMatchObject({ state: 'pending', advertised: true });

    expect((await heartbeat(server, nodeToken, { advertiseRoutes: ['10.20.0.0/16', '10.22.0.0/16'] })).status).toBe(
      200,
    );
    list = await routes(`?device=${device.id}`);
    expect(Object.fromEntries(list.map((r) => [r.prefix, [r.state, r.advertised]]))).toEqual({
      '10.20.0.0/16': ['approved', true],
      '10.21.0.0/16': ['pending', false],
      '10.22.0.0/16': ['pending', true],
    });
    expect(list.find((r) => r.prefix === '10.20.0.0/16').id).toBe(first.id);

    expect((await heartbeat(server, nodeToken, { advertiseRoutes: [] })).status).toBe(200);
    // withdrawn, not deleted: all three keep their state
    list = await routes(`?device=${device.id}`);
    expect(Object.fromEntries(list.map((r) => [r.prefix, [r.state, r.advertised]]))).toEqual({
      '10.20.0.0/16': ['approved', false],
      '10.21.0.0/16': ['pending', false],
      '10.22.0.0/16': ['pending', false],
    });
    const advertise = (await auditEntries(server)).filter(
      (e) => e.action === 'route.advertise' && e.target === device.id,
    );
    expect(advertise).toHaveLength(3);
    expect(advertise[0].deviceId).toBe(device.id);
  });

  it('re-enrolling syncs the advertised set too', async () => {
    const nodeKey = `nodekey:${'ab'.repeat(32)}`;
    const { device } = await enroll(server, authKey, { hostname: 'gw-re', nodeKey, advertiseRoutes: ['10.30.0.0/16'] });
    await enroll(server, authKey, { hostname: 'gw-re', nodeKey, advertiseRoutes: ['10.31.0.0/16'] });
    const list = await routes(`?device=${device.id}`);
    expect(Object.fromEntries(list.map((r) => [r.prefix, r.advertised]))).toEqual({
      '10.30.0.0/16': false,
      '10.31.0.0/16': true,
    });
  });

  it('elects the earliest approved online router as primary and fails over', async () => {
    const a = await enroll(server, authKey, { hostname: 'ha-a', advertiseRoutes: ['10.99.0.0/16'] });
    const b = await enroll(server, authKey, { hostname: 'ha-b', advertiseRoutes: ['10.99.0.0/16'] });
    const routeOf = async (deviceId: string) => (await routes(`?device=${deviceId}`))[0];
    const ra = await routeOf(a.device.id);
    const rb = await routeOf(b.device.id);
    expect((await post(ra.id, 'approve')).status).toBe(200);
    server.clock.advance(1000);
    expect((await post(rb.id, 'approve')).status).toBe(200);
    await heartbeat(server, a.nodeToken);
    await heartbeat(server, b.nodeToken);
    expect((await routeOf(a.device.id)).primary).toBe(true);
    expect((await routeOf(b.device.id)).primary).toBe(false);
    expect((await getDevice(server, a.device.id)).body.routes[0].primary).toBe(true);

    // a goes silent: b takes over once a is offline
    server.clock.advance(45_000);
    await heartbeat(server, b.nodeToken);
    server.clock.advance(20_000);
    expect((await routeOf(a.device.id)).primary).toBe(false);
    expect((await routeOf(b.device.id)).primary).toBe(true);

    // a is back: it was approved first, so it is primary again
    await heartbeat(server, a.nodeToken);
    expect((await routeOf(a.device.id)).primary).toBe(true);
    // a disconnects: b at once
    await nodeCall(server, a.nodeToken, 'disconnect');
    expect((await routeOf(b.device.id)).primary).toBe(true);
    // b withdraws the prefix: nobody serves it
    await heartbeat(server, b.nodeToken, { advertiseRoutes: [] });
    expect((await routeOf(b.device.id)).primary).toBe(false);
  });
});

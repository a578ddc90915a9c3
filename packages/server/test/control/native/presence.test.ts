import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sweepEphemeralDevices } from '../../../src/modules/devices/ephemeral-sweeper.js';
import {
  auditEntries,
  createAuthKey,
  enroll,
  expectProblem,
  getDevice,
  heartbeat,
  listDevices,
  nodeCall,
  startWithAuthKey,
} from '../../devices/helpers.js';
import { startServer, type TestServer } from '../../harness.js';

describe('presence: heartbeat, disconnect, timeout', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
  });
  afterAll(() => server.close());

  it('is online after enrollment and offline 60 s after the last heartbeat', async () => {
    const { device, nodeToken } = await enroll(server, authKey, { hostname: 'pulse' });
    expect(device.online).toBe(true);
    server.clock.advance(59_000);
    expect((await getDevice(server, device.id)).body.online).toBe(true);
    server.clock.advance(1_000);
    expect((await getDevice(server, device.id)).body.online).toBe(false);
    expect((await listDevices(server, '?online=false')).map((d) => d.id)).toContain(device.id);

    const beat = await heartbeat(server, nodeToken);
    expect(beat.status).toBe(200);
    expect(beat.body).toEqual({ online: true, netmapVersion: expect.any(Number) });
    const after = (await getDevice(server, device.id)).body;
    expect(after.online).toBe(true);
    expect(after.lastSeen).toBe(new Date(server.clock.now()).toISOString().replace(/\.000Z$/, 'Z'));
    expect((await listDevices(server, '?online=true')).map((d) => d.id)).toContain(device.id);
  });

  it('goes offline at once on disconnect and back online with the next heartbeat', async () => {
    const { device, nodeToken } = await enroll(server, authKey, { hostname: 'bye' });
    const res = await nodeCall(server, nodeToken, 'disconnect');
    expect(res.status).toBe(204);
    expect((await getDevice(server, device.id)).body.online).toBe(false);
    expect((await listDevices(server, '?online=false')).map((d) => d.id)).toContain(device.id);
    expect((await heartbeat(server, nodeToken)).status).toBe(200);
    expect((await getDevice(server, device.id)).body.online).toBe(true);
  });

  it('refuses a heartbeat with a bad prefix and changes nothing', async () => {
    const { device, nodeToken } = await enroll(server, authKey, { hostname: 'strict' });
    server.clock.advance(30_000);
    await expectProblem(
      await nodeCall(server, nodeToken, 'heartbeat', { advertiseRoutes: ['10.0.0.0/33'] }),
      400,
      'invalid_prefix',
    );
    await expectProblem(await nodeCall(server, nodeToken, 'heartbeat', { extra: true }), 400, 'unknown_field');
    expect((await getDevice(server, device.id)).body.lastSeen).toBe(device.lastSeen);
  });

  it('refuses garbage and unknown node credentials', async () => {
    await expectProblem(await nodeCall(server, 'wrn_node_nope', 'heartbeat'), 401, 'unauthenticated');
    await expectProblem(await server.call('POST', '/v1/node/disconnect', { key: null }), 401, 'unauthenticated');
  });
});

describe('ephemeral devices', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('removes ephemeral devices offline for 10 minutes, audited as device.expire', async () => {
    const ephemeral = (await createAuthKey(server, { reusable: true, ephemeral: true })).key;
    const durable = (await createAuthKey(server, { reusable: true })).key;
    const silent = await enroll(server, ephemeral, { hostname: 'eph-silent' });
    const leaving = await enroll(server, ephemeral, { hostname: 'eph-leaving', advertiseRoutes: ['10.5.0.0/24'] });
    const alive = await enroll(server, ephemeral, { hostname: 'eph-alive' });
    const kept = await enroll(server, durable, { hostname: 'durable' });
    expect((await nodeCall(server, leaving.nodeToken, 'disconnect')).status).toBe(204);

    // 10 minutes after the disconnect: the disconnected one goes; the silent one has been
    // offline for only 9 minutes (its heartbeat aged out after 60 s)
    for (let i = 0; i < 10; i++) {
      server.clock.advance(60_000);
      await heartbeat(server, alive.nodeToken);
    }
    expect(await sweepEphemeralDevices(server.app.ctx)).toBe(1);
    expect((await getDevice(server, leaving.device.id)).status).toBe(404);
    expect((await getDevice(server, silent.device.id)).status).toBe(200);

    server.clock.advance(60_000);
    await heartbeat(server, alive.nodeToken);
    expect(await sweepEphemeralDevices(server.app.ctx)).toBe(1);
    expect((await getDevice(server, silent.device.id)).status).toBe(404);
    expect((await heartbeat(server, silent.nodeToken)).status).toBe(401);
    expect((await getDevice(server, alive.device.id)).status).toBe(200);
    expect((await getDevice(server, kept.device.id)).status).toBe(200);
    expect(await sweepEphemeralDevices(server.app.ctx)).toBe(0);

    const entries = (await auditEntries(server)).filter((e) => e.action === 'device.expire');
    expect(entries.map((e) => e.target).sort()).toEqual([leaving.device.id, silent.device.id].sort());
    expect(entries[0]).toMatchObject({ deviceId: null, keyId: null, method: 'SYSTEM', path: 'ephemeral-sweeper' });
    const routes = await server.database.storage.db
      .selectFrom('routes')
      .selectAll()
      .where('device_id', '=', leaving.device.id)
      .execute();
    expect(routes).toEqual([]);
  });
});

/**
 * Connected devices' presence refreshes (presence-refresh.ts): those of one network made within
 * a second of each other are written by one statement, a device that timed out meanwhile comes
 * back online through the heartbeat's path (its presence epoch moves), and a deleted device is
 * not brought back.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshPresence } from '../../src/modules/devices/presence-refresh.js';
import { netmapHead } from '../../src/modules/netmap/netmap.repository.js';
import { startServer, type TestServer } from '../harness.js';
import { createAuthKey, enroll, getDevice } from './helpers.js';

describe('presence refresh of connected devices', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const lastSeen = async (id: string) =>
    (
      await server.database.storage.db
        .selectFrom('devices')
        .select('last_seen_at')
        .where('id', '=', id)
        .executeTakeFirstOrThrow()
    ).last_seen_at;

  it('writes the refreshes of a network made together as one, moving no epoch', async () => {
    const ctx = server.app.ctx;
    const key = await createAuthKey(server, { reusable: true });
    const devices = await Promise.all([1, 2, 3].map((i) => enroll(server, key.key, { hostname: `held-${i}` })));
    server.clock.advance(30_000);
    const before = await netmapHead(ctx.db, server.networkId);
    const refreshes: Promise<boolean>[] = [];
    for (const { device } of devices) {
      refreshes.push(refreshPresence(ctx, server.networkId, device.id));
      // Each asks at its own time; one statement writes them all at the time it runs.
      server.clock.advance(10);
    }
    expect(await Promise.all(refreshes)).toEqual([true, true, true]);
    const seen = await Promise.all(devices.map(({ device }) => lastSeen(device.id)));
    expect(new Set(seen).size).toBe(1);
    expect(Number(seen[0])).toBe(server.clock.now());
    expect(await netmapHead(ctx.db, server.networkId)).toEqual(before);
    // Online a full window after the refresh, not after enrollment.
    server.clock.advance(59_000);
    for (const { device } of devices) expect((await getDevice(server, device.id)).body.online).toBe(true);
  });

  it('brings a timed-out device back through the heartbeat, and leaves a deleted one gone', async () => {
    const ctx = server.app.ctx;
    const key = await createAuthKey(server, { reusable: true });
    const late = await enroll(server, key.key, { hostname: 'late' });
    const gone = await enroll(server, key.key, { hostname: 'gone' });
    expect((await server.call('DELETE', `/v1/devices/${gone.device.id}`)).status).toBe(204);
    server.clock.advance(61_000);
    expect((await getDevice(server, late.device.id)).body.online).toBe(false);
    const before = await netmapHead(ctx.db, server.networkId);
    const [back, deleted] = await Promise.all([
      refreshPresence(ctx, server.networkId, late.device.id),
      refreshPresence(ctx, server.networkId, gone.device.id),
    ]);
    expect([back, deleted]).toEqual([true, false]);
    expect((await getDevice(server, late.device.id)).body.online).toBe(true);
    expect((await netmapHead(ctx.db, server.networkId))!.presenceEpoch).toBeGreaterThan(before!.presenceEpoch);
    expect((await server.call('GET', `/v1/devices/${gone.device.id}`)).status).toBe(404);
  });
});

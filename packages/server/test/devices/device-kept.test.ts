/**
 * A device's detail record is kept between commits (its row, its routes with their primaries,
 * the presented record: storage/compiled-query.ts, lib/kept.ts), yet what it shows follows the
 * clock: a device times out, and a standby router's route becomes primary when the primary's
 * device does, with nothing written. Read here through the service with no commit between the
 * reads, so only the windows the kept answers carry can make them change; and through the API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deviceDetail } from '../../src/modules/devices/device-details.js';
import { onlineUntil } from '../../src/modules/network/online.js';
import { listRoutes } from '../../src/modules/routes/routes.repository.js';
import { backend, json, type TestServer } from '../harness.js';
import { enroll, heartbeat, startWithAuthKey } from './helpers.js';

describe('kept device records follow the clock', () => {
  let server: TestServer;
  let first: { id: string; token: string; seen: number };
  let second: { id: string; token: string; seen: number };
  let plain: { id: string; seen: number };
  beforeAll(async () => {
    let authKey: string;
    ({ server, authKey } = await startWithAuthKey());
    const router = async (hostname: string) => {
      const { device, nodeToken } = await enroll(server, authKey, { hostname, advertiseRoutes: ['10.9.0.0/24'] });
      return { id: device.id as string, token: nodeToken, seen: 0 };
    };
    first = await router('first');
    second = await router('second');
    const { routes } = await json(await server.call('GET', '/v1/routes'));
    // The first router's route is approved first: primary while its device is online.
    for (const deviceId of [first.id, second.id]) {
      const route = routes.find((r: { deviceId: string }) => r.deviceId === deviceId);
      expect((await server.call('POST', `/v1/routes/${route.id}/approve`)).status).toBe(200);
      server.clock.ms += 1_000;
    }
    first.seen = server.clock.ms;
    expect((await heartbeat(server, first.token)).status).toBe(200);
    server.clock.ms += 10_000;
    second.seen = server.clock.ms;
    expect((await heartbeat(server, second.token)).status).toBe(200);
    const { device, nodeToken } = await enroll(server, authKey, { hostname: 'plain' });
    plain = { id: device.id, seen: server.clock.ms };
    expect((await heartbeat(server, nodeToken)).status).toBe(200);
    await server.app.ctx.audit.settled();
  });
  afterAll(() => server.close());

  const detail = (id: string, now: number) => deviceDetail(server.database.storage.db, server.networkId, id, now);
  const primary = (device: { routes?: readonly { primary: boolean }[] }) => device.routes?.[0]?.primary;

  it('hands a standby route over and times a device out with nothing committed', async () => {
    const before = onlineUntil(first.seen) - 1;
    const one = await detail(second.id, before - 5_000);
    expect(one.online).toBe(true);
    expect(primary(one)).toBe(false);
    if (backend === 'sqlite') expect(await detail(second.id, before)).toBe(one);
    expect(primary(await detail(first.id, before))).toBe(true);
    // The first router times out: the second one's route takes over.
    const after = onlineUntil(first.seen);
    const taken = await detail(second.id, after);
    expect(taken.online).toBe(true);
    expect(primary(taken)).toBe(true);
    const gone = await detail(first.id, after);
    expect(gone.online).toBe(false);
    expect(primary(gone)).toBe(false);
    // Then the second one.
    const both = await detail(second.id, onlineUntil(second.seen));
    expect(both.online).toBe(false);
    expect(primary(both)).toBe(false);
  });

  it('hands the route list over the same way', async () => {
    const primaryOf = async (now: number) =>
      (await listRoutes(server.database.storage.db, server.networkId, now, {}))
        .filter((route) => Number(route.is_primary) === 1)
        .map((route) => route.device_id);
    const before = onlineUntil(first.seen) - 1;
    expect(await primaryOf(before - 5_000)).toEqual([first.id]);
    if (backend === 'sqlite') {
      const kept = await listRoutes(server.database.storage.db, server.networkId, before - 5_000, {});
      expect(await listRoutes(server.database.storage.db, server.networkId, before, {})).toBe(kept);
    }
    expect(await primaryOf(onlineUntil(first.seen))).toEqual([second.id]);
    expect(await primaryOf(onlineUntil(second.seen))).toEqual([]);
  });

  it('times out a device that serves no route, whose routes answer never changes', async () => {
    const one = await detail(plain.id, onlineUntil(plain.seen) - 1);
    expect(one.online).toBe(true);
    expect((await detail(plain.id, onlineUntil(plain.seen))).online).toBe(false);
  });

  it('answers the API with the change once the clock passes the timeout', async () => {
    server.clock.ms = onlineUntil(first.seen) - 1;
    const read = async (path: string) => json(await server.call('GET', path));
    expect(primary(await read(`/v1/devices/${second.id}`))).toBe(false);
    expect((await read(`/api/v2/device/${first.id}`)).online ?? true).toBeTruthy();
    server.clock.ms = onlineUntil(first.seen);
    expect(primary(await read(`/v1/devices/${second.id}`))).toBe(true);
    expect((await read(`/v1/devices/${first.id}`)).online).toBe(false);
    const { routes } = await read('/v1/routes');
    expect(
      routes.filter((route: { primary: boolean }) => route.primary).map((r: { deviceId: string }) => r.deviceId),
    ).toEqual([second.id]);
  });
});

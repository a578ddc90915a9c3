/**
 * The route reads (`/v1/routes`, a device's routes on `/api/v2`, the routes of a detail record)
 * show routes, their devices' names and primary flags that follow the routers' presence,
 * approval and expiry. On PostgreSQL they are kept per read stamp and device record stamp
 * (migration 044), which a heartbeat that keeps its device online does not move: a fleet's
 * ordinary heartbeats no longer make them read again. A router coming back online, a router
 * disconnected, renamed or deleted, must show on the very next call. The reads are served by a
 * second instance on the same database, so a change made through the first reaches them only
 * through the database; the routes' statements are counted from the channel compiled selects
 * publish them on.
 */
import { channel } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onlineUntil } from '../../src/modules/network/online.js';
import { enroll, heartbeat, startWithAuthKey } from '../devices/helpers.js';
import { backend, json, type SecondInstance, secondInstance, type TestServer } from '../harness.js';

const PREFIX = '10.78.0.0/24';

interface Router {
  id: string;
  token: string;
  seen: number;
}

describe('route reads kept across heartbeats', () => {
  let server: TestServer;
  let second: SecondInstance;
  let authKey: string;
  let first: Router;
  let standby: Router;
  let bystander: Router;
  let routeReads = 0;
  const count = (message: unknown) => {
    const { query } = message as { query: string };
    if (query === 'routes-list' || query === 'device-routes') routeReads++;
  };

  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
    second = await secondInstance(server);
    const routers: Router[] = [];
    for (const hostname of ['first', 'standby', 'bystander']) {
      const body = hostname === 'bystander' ? { hostname } : { hostname, advertiseRoutes: [PREFIX] };
      const { device, nodeToken } = await enroll(server, authKey, body);
      routers.push({ id: device.id, token: nodeToken, seen: 0 });
    }
    [first, standby, bystander] = routers as [Router, Router, Router];
    // The first router's route is approved first: primary while its device is online.
    for (const router of [first, standby]) {
      const { routes } = await json(await server.call('GET', `/v1/routes?device=${router.id}`));
      expect((await server.call('POST', `/v1/routes/${routes[0].id}/approve`)).status).toBe(200);
      server.clock.ms += 1_000;
    }
    // Heartbeats start at a minute's turn: each owner's `lastSeen`, which moves the read stamp,
    // is written once a minute, so the heartbeats of one minute after the first move only presence.
    server.clock.ms = Math.ceil(server.clock.ms / 60_000) * 60_000 + 1_000;
    await beat(first, standby, bystander);
    channel('warren:compiled-query:read').subscribe(count);
  });
  afterAll(async () => {
    channel('warren:compiled-query:read').unsubscribe(count);
    await second.close();
    await server.close();
  });

  async function beat(...routers: Router[]): Promise<void> {
    for (const router of routers) {
      router.seen = server.clock.ms;
      expect((await heartbeat(server, router.token)).status).toBe(200);
    }
  }

  /** Audit rows and an API key's uses, written after their calls, all written. */
  async function settled(): Promise<void> {
    await server.app.ctx.audit.settled();
    await second.settled();
  }

  async function routes(): Promise<{ deviceId: string; deviceName: string; primary: boolean }[]> {
    const res = await second.get('/v1/routes');
    expect(res.status).toBe(200);
    return (await json(res)).routes;
  }
  async function deviceRoutes(id: string): Promise<{ advertisedRoutes: string[]; enabledRoutes: string[] }> {
    const res = await second.get(`/api/v2/device/${id}/routes`);
    expect(res.status).toBe(200);
    return json(res);
  }
  const primaries = async () => (await routes()).filter((route) => route.primary).map((route) => route.deviceId);

  /** Reads until a round reads no routes: a round's key use may land only with the next one's. */
  async function settledReads(): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const before = routeReads;
      await routes();
      await deviceRoutes(first.id);
      await settled();
      if (routeReads === before) return;
    }
  }

  it.runIf(backend === 'postgres')('heartbeats that keep every device online read no route again', async () => {
    await settledReads();
    const before = [await routes(), await deviceRoutes(first.id)];
    routeReads = 0;
    server.clock.ms += 5_000;
    await beat(bystander, first, standby);
    expect([await routes(), await deviceRoutes(first.id)]).toEqual(before);
    // Without the record stamp the device list stamp, which each heartbeat moves, kept them.
    expect(routeReads).toBe(0);
  });

  it('shows a router that comes back online, and one disconnected, at once', async () => {
    expect(await primaries()).toEqual([first.id]);
    // The first router times out with nothing written: the standby takes over, by the clock.
    server.clock.ms = onlineUntil(first.seen) + 1;
    await beat(standby, bystander);
    await settledReads();
    expect(await primaries()).toEqual([standby.id]);
    // Its return is a heartbeat like any other, which must reach the kept answers.
    await beat(first);
    expect(await primaries()).toEqual([first.id]);
    // A disconnect: the map stream's device is offline at once.
    await server.database.storage.db
      .updateTable('devices')
      .set({ disconnected: 1 })
      .where('id', '=', first.id)
      .execute();
    expect(await primaries()).toEqual([standby.id]);
    await beat(first);
    expect(await primaries()).toEqual([first.id]);
  });

  it('shows a router renamed, its route taken away, or its device deleted, outside the API', async () => {
    await settledReads();
    const db = server.database.storage.db;
    await db.updateTable('devices').set({ name: 'renamed-by-hand' }).where('id', '=', first.id).execute();
    expect((await routes()).find((route) => route.deviceId === first.id)?.deviceName).toBe('renamed-by-hand');
    await db.updateTable('devices').set({ authorized: 0 }).where('id', '=', first.id).execute();
    expect(await primaries()).toEqual([standby.id]);
    await db.deleteFrom('devices').where('id', '=', standby.id).execute();
    expect(await primaries()).toEqual([]);
    expect((await routes()).map((route) => route.deviceId)).toEqual([first.id]);
  });
});

/**
 * A detail list (`?fields=all`, `/api/v2`'s device list) keeps the network's routes per the stamp
 * its own read of the list gives them, and across the clock until a primary can change
 * (modules/devices/network-routes.ts). Here the lists are served by a second instance on the
 * same database, so a change made through the first reaches them only through the database;
 * the routes' statements are counted from the channel compiled selects publish them on.
 */
import { channel } from 'node:diagnostics_channel';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { onlineUntil } from '../../src/modules/network/online.js';
import { backend, json, type SecondInstance, secondInstance, type TestServer } from '../harness.js';
import { enroll, heartbeat, startWithAuthKey } from './helpers.js';

const PREFIX = '10.77.0.0/24';

describe('the network routes a detail list keeps', () => {
  let server: TestServer;
  let second: SecondInstance;
  let authKey: string;
  const routers: { id: string; token: string; seen: number }[] = [];
  let routeReads = 0;
  let stampReads = 0;
  const count = (message: unknown) => {
    if ((message as { query: string }).query === 'network-routes') routeReads++;
    if ((message as { query: string }).query === 'device-list-stamps') stampReads++;
  };

  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
    second = await secondInstance(server);
    for (const hostname of ['first', 'standby']) {
      const { device, nodeToken } = await enroll(server, authKey, { hostname, advertiseRoutes: [PREFIX] });
      routers.push({ id: device.id, token: nodeToken, seen: 0 });
    }
    // The first router's route is approved first: primary while its device is online.
    for (const router of routers) {
      const { routes } = await json(await server.call('GET', `/v1/routes?device=${router.id}`));
      expect((await server.call('POST', `/v1/routes/${routes[0].id}/approve`)).status).toBe(200);
      server.clock.ms += 1_000;
    }
    for (const router of routers) {
      router.seen = server.clock.ms;
      expect((await heartbeat(server, router.token)).status).toBe(200);
      server.clock.ms += 10_000;
    }
    channel('warren:compiled-query:read').subscribe(count);
  });
  afterEach(() => settled());
  afterAll(async () => {
    channel('warren:compiled-query:read').unsubscribe(count);
    await second.close();
    await server.close();
  });

  /** `?fields=all` from the second instance: each device's routes by device id. */
  async function routesById(): Promise<
    Map<string, { prefix: string; state: string; advertised: boolean; primary: boolean }[]>
  > {
    const res = await second.get('/v1/devices?fields=all');
    expect(res.status).toBe(200);
    return new Map((await json(res)).devices.map((d: any) => [d.id, d.routes]));
  }

  /** `/api/v2`'s list from the second instance, by device id. */
  async function tailscaleById(): Promise<Map<string, { advertisedRoutes: string[]; enabledRoutes: string[] }>> {
    const res = await second.get('/api/v2/tailnet/-/devices?fields=all');
    expect(res.status).toBe(200);
    return new Map((await json(res)).devices.map((d: any) => [d.id, d]));
  }
  const enabled = async (id: string) => (await tailscaleById()).get(id)?.enabledRoutes;

  const primaries = async () =>
    [...(await routesById())].filter(([, routes]) => routes.some((r) => r.primary)).map(([id]) => id);

  /**
   * Audit rows and an API key's uses are written after its calls (the uses once a minute per
   * key and instance; on PostgreSQL they move the read stamp): settled, nothing of them is left
   * to land between the calls that follow.
   */
  async function settled(): Promise<void> {
    await server.app.ctx.audit.settled();
    await second.settled();
  }

  /**
   * Lists until a round reads no routes: a call's audit row is queued as its response ends, so
   * the key use of one round may be written only with the next round's rows.
   */
  async function settledLists(): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const before = routeReads;
      await routesById();
      await tailscaleById();
      await settled();
      if (routeReads === before) return;
    }
  }

  it('answers an unchanged network without reading its routes again', async () => {
    await settledLists();
    routeReads = 0;
    const before = await routesById();
    expect(await routesById()).toEqual(before);
    await tailscaleById();
    // Later, still before any router's heartbeat grows old.
    server.clock.ms += 5_000;
    expect(await routesById()).toEqual(before);
    expect(routeReads).toBe(0);
    expect(await primaries()).toEqual([routers[0]!.id]);
  });

  it.runIf(backend === 'postgres')('takes the list stamps from the API key statement on PostgreSQL', async () => {
    await settledLists();
    stampReads = 0;
    routeReads = 0;
    await routesById();
    await tailscaleById();
    expect(stampReads).toBe(0);
    expect(routeReads).toBe(0);
  });

  it('hands the primary over when its router times out, with nothing written', async () => {
    const [first, standby] = routers as [(typeof routers)[0], (typeof routers)[0]];
    server.clock.ms = onlineUntil(first.seen) - 1;
    await settledLists();
    expect(await primaries()).toEqual([first.id]);
    expect(await enabled(standby.id)).toEqual([PREFIX]);

    routeReads = 0;
    server.clock.ms = onlineUntil(first.seen);
    expect(await primaries()).toEqual([standby.id]);
    expect((await routesById()).get(first.id)).toEqual([
      expect.objectContaining({ state: 'approved', primary: false }),
    ]);
    // Read again once, when the clock reached the first moment a primary could change.
    expect(routeReads).toBe(1);

    // Then the standby times out too: no router serves the prefix.
    server.clock.ms = onlineUntil(standby.seen);
    expect(await primaries()).toEqual([]);
  });

  it('shows routes approved, disabled, withdrawn and deleted through the other instance', async () => {
    const [first, standby] = routers as [(typeof routers)[0], (typeof routers)[0]];
    // Both routers come back, the standby first, in one minute: their owner's `lastSeen` is
    // written once, with the standby's heartbeat, so on PostgreSQL the first router's return
    // moves only the device list stamp, not the read stamp.
    server.clock.ms = Math.ceil(server.clock.ms / 60_000) * 60_000 + 1_000;
    expect((await heartbeat(server, standby.token)).status).toBe(200);
    await settledLists();
    expect(await primaries()).toEqual([standby.id]);
    server.clock.ms += 1_000;
    expect((await heartbeat(server, first.token)).status).toBe(200);
    expect(await primaries()).toEqual([first.id]);

    const { routes } = await json(await server.call('GET', `/v1/routes?device=${first.id}`));
    expect((await server.call('POST', `/v1/routes/${routes[0].id}/disable`)).status).toBe(200);
    expect(await primaries()).toEqual([standby.id]);
    expect((await routesById()).get(first.id)).toEqual([expect.objectContaining({ state: 'disabled' })]);
    expect(await enabled(first.id)).toEqual([]);

    // Approved again, it is the later approval of the two: the standby stays primary.
    expect((await server.call('POST', `/v1/routes/${routes[0].id}/approve`)).status).toBe(200);
    expect((await routesById()).get(first.id)).toEqual([
      expect.objectContaining({ state: 'approved', primary: false }),
    ]);
    expect(await enabled(first.id)).toEqual([PREFIX]);

    // The first router stops advertising its route (its heartbeat withdraws it).
    expect((await heartbeat(server, first.token, { advertiseRoutes: [] })).status).toBe(200);
    expect((await routesById()).get(first.id)).toEqual([expect.objectContaining({ advertised: false })]);
    expect((await tailscaleById()).get(first.id)?.advertisedRoutes).toEqual([]);

    // An operator's fix in SQL, through no service: the standby's route row is deleted.
    await server.database.storage.db.deleteFrom('routes').where('device_id', '=', standby.id).execute();
    expect((await routesById()).get(standby.id)).toEqual([]);
    expect(await enabled(standby.id)).toEqual([]);
  });
});

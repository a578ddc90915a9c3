/**
 * A single device's record (`/v1/devices/{id}`, `/api/v2/device/{id}`) on PostgreSQL: its row is
 * kept per read stamp and device record stamp (migration 044), its presence per device list
 * stamp (modules/devices/device-details.ts). Another device's heartbeat reads neither the row
 * nor the routes again; the device's own heartbeat shows its new `lastSeen` on the very next
 * call, reading only its presence; a change of what the record shows shows at once. The reads
 * are served by a second instance on the same database, so a change made through the first
 * reaches them only through the database; statements are counted from the channel compiled
 * selects publish them on.
 */
import { channel } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backend, json, type SecondInstance, secondInstance, type TestServer } from '../harness.js';
import { enroll, heartbeat, startWithAuthKey } from './helpers.js';

describe('a single device kept across heartbeats', () => {
  let server: TestServer;
  let second: SecondInstance;
  let device: { id: string; token: string };
  let other: { id: string; token: string };
  const reads = new Map<string, number>();
  const count = (message: unknown) => {
    const { query } = message as { query: string };
    reads.set(query, (reads.get(query) ?? 0) + 1);
  };
  const readsOf = (...queries: string[]) => queries.reduce((sum, query) => sum + (reads.get(query) ?? 0), 0);

  beforeAll(async () => {
    const started = await startWithAuthKey();
    server = started.server;
    second = await secondInstance(server);
    const enrolled = [];
    for (const hostname of ['watched', 'other']) {
      const { device, nodeToken } = await enroll(server, started.authKey, {
        hostname,
        advertiseRoutes: ['10.79.0.0/24'],
      });
      enrolled.push({ id: device.id, token: nodeToken });
    }
    [device, other] = enrolled as [typeof device, typeof other];
    // Heartbeats start at a minute's turn: each owner's `lastSeen`, which moves the read stamp,
    // is written once a minute, so the heartbeats of one minute after the first move only presence.
    server.clock.ms = Math.ceil(server.clock.ms / 60_000) * 60_000 + 1_000;
    for (const one of [device, other]) expect((await heartbeat(server, one.token)).status).toBe(200);
    channel('warren:compiled-query:read').subscribe(count);
  });
  afterAll(async () => {
    channel('warren:compiled-query:read').unsubscribe(count);
    await second.close();
    await server.close();
  });

  const get = async (path: string) => {
    const res = await second.get(path);
    expect(res.status).toBe(200);
    return json(res);
  };
  const both = async () => [await get(`/v1/devices/${device.id}`), await get(`/api/v2/device/${device.id}`)];

  /** Reads until a round reads nothing: a round's key use may land only with the next one's. */
  async function settledReads(): Promise<void> {
    for (let round = 0; round < 5; round++) {
      const before = readsOf('device-by-id', 'device-presence', 'device-routes');
      await both();
      await server.app.ctx.audit.settled();
      await second.settled();
      if (readsOf('device-by-id', 'device-presence', 'device-routes') === before) return;
    }
  }

  it.runIf(backend === 'postgres')("another device's heartbeat reads nothing again", async () => {
    await settledReads();
    const before = await both();
    reads.clear();
    server.clock.ms += 5_000;
    expect((await heartbeat(server, other.token)).status).toBe(200);
    expect(await both()).toEqual(before);
    expect(readsOf('device-by-id', 'device-routes')).toBe(0);
  });

  it("shows the device's own heartbeat at once, reading only its presence on PostgreSQL", async () => {
    await settledReads();
    reads.clear();
    server.clock.ms += 5_000;
    expect((await heartbeat(server, device.token)).status).toBe(200);
    const [v1, v2] = await both();
    expect(Date.parse(v1.lastSeen)).toBe(server.clock.ms);
    expect(v1.online).toBe(true);
    // `/api/v2` shows `lastSeen` only while the device is not connected.
    expect(v2.connectedToControl).toBe(true);
    if (backend === 'postgres') expect(readsOf('device-by-id', 'device-routes')).toBe(0);
  });

  it('shows a record change, a disconnect and a deletion at once, written outside the API', async () => {
    const db = server.database.storage.db;
    await settledReads();
    await db.updateTable('devices').set({ tags: '["tag:by-hand"]' }).where('id', '=', device.id).execute();
    const [v1, v2] = await both();
    expect(v1.tags).toEqual(['tag:by-hand']);
    expect(v2.tags).toEqual(['tag:by-hand']);
    await db.updateTable('devices').set({ disconnected: 1 }).where('id', '=', device.id).execute();
    expect((await get(`/v1/devices/${device.id}`)).online).toBe(false);
    expect(Date.parse((await get(`/api/v2/device/${device.id}`)).lastSeen)).toBe(server.clock.ms);
    await db.deleteFrom('devices').where('id', '=', device.id).execute();
    expect((await second.get(`/v1/devices/${device.id}`)).status).toBe(404);
    expect((await second.get(`/api/v2/device/${device.id}`)).status).toBe(404);
  });
});

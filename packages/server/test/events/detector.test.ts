/**
 * Transitions no call makes: presence and key expiry, found by the detector pass and
 * announced once each, also when several passes (instances) look at the same moment.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectPresence } from '../../src/modules/events/detector.js';
import { detectTransitions } from '../../src/modules/events/events.worker.js';
import { createAuthKey, deviceRow, enroll, heartbeat } from '../devices/helpers.js';
import { startServer, type TestServer } from '../harness.js';
import { eventPage } from './helpers.js';

describe('event detector', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { eventDetectorIntervalMs: 3_600_000 } });
  });
  afterAll(() => server.close());

  const ctx = () => server.app.ctx;
  const typesSince = async (cursor: string, type: string) =>
    (await eventPage(server, `?cursor=${cursor}&type=${type}`)).entries;

  it('announces a device online once and offline once, however many passes look', async () => {
    const authKey = (await createAuthKey(server, { reusable: true, expiresIn: '30d' })).key;
    const start = (await eventPage(server)).nextCursor;
    const device = await enroll(server, authKey, { hostname: 'db-1' });
    await Promise.all([detectTransitions(ctx()), detectTransitions(ctx()), detectTransitions(ctx())]);
    await detectTransitions(ctx());
    let events = await typesSince(start, 'device.*');
    expect(events.filter((e) => e.type === 'device.online').map((e) => e.data.device.id)).toEqual([device.device.id]);
    expect(events.find((e) => e.type === 'device.online').actor).toMatchObject({ type: 'system' });

    server.clock.advance(61_000);
    await Promise.all([detectTransitions(ctx()), detectTransitions(ctx())]);
    await detectTransitions(ctx());
    events = await typesSince(start, 'device.offline');
    expect(events.map((e) => e.data.device)).toEqual([
      expect.objectContaining({ id: device.device.id, online: false }),
    ]);

    await heartbeat(server, device.nodeToken);
    await detectTransitions(ctx());
    const online = await typesSince(start, 'device.online');
    expect(online).toHaveLength(2);
  });

  it('announces key.expiring a day ahead and key.expired once', async () => {
    const start = (await eventPage(server)).nextCursor;
    const key = await createAuthKey(server, { expiresIn: '2d' });
    await detectTransitions(ctx());
    expect(await typesSince(start, 'key.expiring')).toEqual([]);
    server.clock.advance(25 * 3_600_000);
    await Promise.all([detectTransitions(ctx()), detectTransitions(ctx())]);
    const expiring = await typesSince(start, 'key.expiring');
    expect(expiring.map((e) => e.data.key.id)).toEqual([key.id]);
    server.clock.advance(24 * 3_600_000);
    await Promise.all([detectTransitions(ctx()), detectTransitions(ctx())]);
    await detectTransitions(ctx());
    const expired = await typesSince(start, 'key.expired');
    expect(expired.filter((e) => e.data.key.id === key.id).map((e) => e.data.key.state)).toEqual(['expired']);
  });

  it('announces neither the expiry nor its approach of a single-use key that was used', async () => {
    const start = (await eventPage(server)).nextCursor;
    const used = await createAuthKey(server, { expiresIn: '2d' });
    const unused = await createAuthKey(server, { expiresIn: '2d' });
    await enroll(server, used.key, { hostname: 'once-1' });
    // A used key stopped working already, and its state stays "used" (the most final reason):
    // "expiring" or "expired" would announce what never happens to it.
    for (const hours of [25, 24]) {
      server.clock.advance(hours * 3_600_000);
      await detectTransitions(ctx());
    }
    const announced = async (type: string) => (await typesSince(start, type)).map((e) => e.data.key.id);
    expect(await announced('key.expiring')).toEqual([unused.id]);
    expect(await announced('key.expired')).toEqual([unused.id]);
  });

  it('announces a whole fleet coming online once each, in a bounded number of statements', async () => {
    const start = (await eventPage(server)).nextCursor;
    const now = server.clock.now();
    const count = 620; // more than one chunk of 500 claims
    const ids = Array.from({ length: count }, (_, i) => `dev_fleet${String(i).padStart(4, '0')}`);
    await server.database.storage.db
      .insertInto('devices')
      .values(
        ids.map((id, i) =>
          deviceRow({ id, networkId: server.networkId, name: id, addrIndex: 50_000 + i, nodeTokenHash: id, now }),
        ),
      )
      .execute();
    let statements = 0;
    const counting = server.database.storage.db.withPlugin({
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    await detectPresence({ db: counting, clock: server.clock });
    await detectPresence({ db: counting, clock: server.clock });
    await Promise.all([detectTransitions(ctx()), detectTransitions(ctx())]);
    const online = new Map<string, number>();
    let cursor = start;
    for (;;) {
      const page = await eventPage(server, `?cursor=${cursor}&type=device.online&limit=1000`);
      for (const e of page.entries) online.set(e.data.device.id, (online.get(e.data.device.id) ?? 0) + 1);
      if (page.entries.length === 0) break;
      cursor = page.nextCursor;
    }
    expect(ids.every((id) => online.get(id) === 1)).toBe(true);
    // A handful of statements per unit of 100 transitions, none per device (it was four per device).
    expect(statements).toBeLessThan(count / 5);
  });
});

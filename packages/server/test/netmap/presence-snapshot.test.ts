/**
 * The presence snapshot follows devices timing out, and devices whose presence a call moved,
 * by reading only those again (modules/netmap/presence-snapshot.ts); it must always equal the
 * online set read whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netmapHead } from '../../src/modules/netmap/netmap.repository.js';
import { presenceSnapshot, wholePresence } from '../../src/modules/netmap/presence-snapshot.js';
import { KEPT_EPOCHS } from '../../src/modules/network/epoch-log.js';
import { type EnrolledDevice, enroll, heartbeat, nodeCall, startWithAuthKey } from '../devices/helpers.js';
import type { TestServer } from '../harness.js';

describe('presence snapshot', () => {
  let server: TestServer;
  const devices: EnrolledDevice[] = [];

  let authKey: string;

  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
    for (let i = 0; i < 4; i++) {
      devices.push(await enroll(server, authKey, { hostname: `pulse-${i}` }));
      server.clock.advance(10_000);
    }
  });
  afterAll(() => server.close());

  const snapshot = async () => {
    const db = server.database.storage.db;
    return presenceSnapshot(db, server.networkId, (await netmapHead(db, server.networkId))!, server.clock.now());
  };
  /** The same set read whole. */
  const readWhole = () => wholePresence(server.database.storage.db, server.networkId, server.clock.now());
  const ids = (set: Iterable<string>) => [...set].sort();

  it('drops devices as they time out and keeps those that heartbeated, equal to a whole read', async () => {
    const all = devices.map((d) => d.device.id);
    const first = await snapshot();
    expect(ids(first.online)).toEqual([...all].sort());
    expect(await snapshot()).toBe(first);

    // The first device times out; the third heartbeats just before it would have.
    server.clock.advance(19_000);
    expect((await heartbeat(server, devices[2]!.nodeToken)).status).toBe(200);
    server.clock.advance(10_999);
    const second = await snapshot();
    expect(ids(second.online)).toEqual([all[1], all[2], all[3]].sort());
    const whole = await readWhole();
    expect(second.digest).toBe(whole.digest);
    expect(ids(second.online)).toEqual(ids(whole.online));
    expect(second.digest).not.toBe(first.digest);

    // Past the second and fourth devices' timeouts, only the heartbeating one is left.
    server.clock.advance(40_000);
    const third = await snapshot();
    expect(ids(third.online)).toEqual([all[2]]);
    expect(third.digest).toBe((await readWhole()).digest);

    server.clock.advance(60_000);
    const none = await snapshot();
    expect(none.online.size).toBe(0);
    expect(none.digest).toBe((await readWhole()).digest);
  });

  it('follows devices that come back and leave by the presence log, equal to a whole read', async () => {
    const all = devices.map((d) => d.device.id);
    // Everyone back online: four crossings, four epochs, each logged.
    for (const d of devices) expect((await heartbeat(server, d.nodeToken)).status).toBe(200);
    const back = await snapshot();
    expect(ids(back.online)).toEqual([...all].sort());
    expect(back.digest).toBe((await readWhole()).digest);

    // One disconnects and, a moment later, a device enrolls: each snapshot is made by difference
    // from the one before it (a whole read in between would be a snapshot of another epoch).
    const before = await snapshot();
    expect((await nodeCall(server, devices[1]!.nodeToken, 'disconnect')).status).toBe(204);
    server.clock.advance(1);
    const after = await snapshot();
    expect(after.madeFrom).toMatchObject({ left: [all[1]], joined: [] });
    expect(after.madeFrom?.snapshot).toBe(before);
    expect(ids(after.online)).toEqual([all[0], all[2], all[3]].sort());

    const fifth = await enroll(server, authKey, { hostname: 'pulse-new' });
    const joined = await snapshot();
    // Only one step is kept: the snapshot before no longer names its own predecessor.
    expect(after.madeFrom).toBeUndefined();
    expect(joined.madeFrom).toMatchObject({ left: [], joined: [fifth.device.id] });
    expect(joined.madeFrom?.snapshot).toBe(after);
    expect(ids(joined.online)).toEqual([all[0], all[2], all[3], fifth.device.id].sort());
    const whole = await readWhole();
    expect(joined.digest).toBe(whole.digest);
    expect(ids(joined.online)).toEqual(ids(whole.online));
  });

  it('answers a call that read its head before the held snapshot was made from that snapshot', async () => {
    // Concurrent calls finish in any order: one that read the head and the clock before another
    // moved the snapshot on must not take it back (a whole read, and a step backwards).
    const db = server.database.storage.db;
    const staleHead = (await netmapHead(db, server.networkId))!;
    const staleNow = server.clock.now();
    await snapshot();
    expect((await heartbeat(server, devices[1]!.nodeToken)).status).toBe(200);
    server.clock.advance(5);
    const current = await snapshot();
    expect(current.online.has(devices[1]!.device.id)).toBe(true);
    expect(await presenceSnapshot(db, server.networkId, staleHead, staleNow)).toBe(current);
    expect(await snapshot()).toBe(current);
  });

  it('prunes the presence log as a crossing lands on a pruning epoch, on either backend', async () => {
    const db = server.database.storage.db;
    const logged = () =>
      db
        .selectFrom('presence_changes')
        .select(['epoch', 'device_id'])
        .where('network_id', '=', server.networkId)
        .execute();
    expect((await logged()).length).toBeGreaterThan(0);
    // The next crossing moves the epoch to a multiple of 64 past everything logged.
    const head = (await netmapHead(db, server.networkId))!;
    const next = Math.ceil((head.presenceEpoch + KEPT_EPOCHS + 1) / 64) * 64;
    await db
      .updateTable('networks')
      .set({ presence_epoch: next - 1 })
      .where('id', '=', server.networkId)
      .execute();
    expect((await nodeCall(server, devices[0]!.nodeToken, 'disconnect')).status).toBe(204);
    expect((await logged()).map((row) => [Number(row.epoch), row.device_id])).toEqual([[next, devices[0]!.device.id]]);
  });
});

/**
 * The presence snapshot follows devices timing out by reading only those that looked timed
 * out (modules/node/presence-snapshot.ts); it must always equal the online set read whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { netmapHead } from '../../src/modules/node/netmap.repository.js';
import { presenceSnapshot } from '../../src/modules/node/presence-snapshot.js';
import { type EnrolledDevice, enroll, heartbeat, startWithAuthKey } from '../devices/helpers.js';
import type { TestServer } from '../harness.js';

describe('presence snapshot', () => {
  let server: TestServer;
  const devices: EnrolledDevice[] = [];

  beforeAll(async () => {
    let authKey: string;
    ({ server, authKey } = await startWithAuthKey());
    for (let i = 0; i < 4; i++) {
      devices.push(await enroll(server, authKey, { hostname: `pulse-${i}` }));
      server.clock.advance(10_000);
    }
  });
  afterAll(() => server.close());

  const snapshot = async (epochOffset = 0) => {
    const db = server.database.storage.db;
    const head = (await netmapHead(db, server.networkId))!;
    return presenceSnapshot(
      db,
      server.networkId,
      { ...head, presenceEpoch: head.presenceEpoch + epochOffset },
      server.clock.now(),
    );
  };
  /** The same set read whole: a presence epoch no snapshot was taken at. */
  let fresh = 1_000;
  const readWhole = () => snapshot(fresh++);
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
});

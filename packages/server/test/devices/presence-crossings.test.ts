/**
 * Crossings (a device going online or offline) are batched per network: the first is written
 * at once, those arriving while it is in flight go together in one write, with one presence
 * epoch move and every device logged against it, so other instances' presence snapshots
 * follow each of them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crossPresence } from '../../src/modules/devices/presence-crossings.js';
import { presenceChangedSince } from '../../src/modules/network/presence-changes.js';
import type { TestServer } from '../harness.js';
import {
  type EnrolledDevice,
  enroll,
  getDevice,
  heartbeat,
  presenceEpochOf,
  startWithAuthKey,
  storedPresence,
} from './helpers.js';

describe('presence crossings', () => {
  let server: TestServer;
  let devices: EnrolledDevice[];
  const db = () => server.database.storage.db;
  const presenceEpoch = () => presenceEpochOf(server);
  const presenceOf = (id: string) => storedPresence(server, id);

  beforeAll(async () => {
    let authKey: string;
    ({ server, authKey } = await startWithAuthKey());
    devices = [];
    for (let i = 0; i < 12; i++) devices.push(await enroll(server, authKey, { hostname: `burst-${i}` }));
  });
  afterAll(() => server.close());

  it('writes a burst in one move after the first, and logs every device against it', async () => {
    server.clock.advance(61_000);
    const now = server.clock.now();
    const before = await presenceEpoch();
    const results = await Promise.all(
      devices.map(({ device }) =>
        crossPresence(db(), server.networkId, device.id, { last_seen_at: now, disconnected: 0 }),
      ),
    );
    expect(results).toEqual(devices.map(() => ({ advertised_routes: expect.any(String) })));
    // The first crossing went alone; the other eleven arrived while it was written.
    expect(await presenceEpoch()).toBe(before + 2);
    const logged = await presenceChangedSince(db(), server.networkId, before, before + 2);
    expect(logged?.sort()).toEqual(devices.map(({ device }) => device.id).sort());
    for (const { device } of devices)
      expect(await presenceOf(device.id)).toEqual({ last_seen_at: now, disconnected: 0 });
  });

  it('answers a gone device with nothing and still writes the others of its batch', async () => {
    const now = server.clock.now();
    const [first, second] = devices;
    const before = await presenceEpoch();
    const results = await Promise.all([
      crossPresence(db(), server.networkId, first!.device.id, { last_seen_at: now, disconnected: 1 }),
      crossPresence(db(), server.networkId, 'dev_gone', { last_seen_at: now, disconnected: 1 }),
      crossPresence(db(), server.networkId, second!.device.id, { last_seen_at: now, disconnected: 1 }),
    ]);
    expect(results).toEqual([
      { advertised_routes: expect.any(String) },
      undefined,
      { advertised_routes: expect.any(String) },
    ]);
    expect(await presenceEpoch()).toBe(before + 2);
    expect((await presenceChangedSince(db(), server.networkId, before, before + 2))?.sort()).toEqual(
      [first!.device.id, second!.device.id].sort(),
    );
  });

  it('moves nothing when every device of a batch is gone or of another network', async () => {
    const before = await presenceEpoch();
    const now = server.clock.now();
    expect(
      await crossPresence(db(), server.networkId, 'dev_gone', { last_seen_at: now, disconnected: 0 }),
    ).toBeUndefined();
    const [device] = devices;
    expect(
      await crossPresence(db(), 'net_elsewhere', device!.device.id, { last_seen_at: now + 5, disconnected: 0 }),
    ).toBeUndefined();
    expect(await presenceEpoch()).toBe(before);
    expect(await presenceOf(device!.device.id)).toEqual({ last_seen_at: now, disconnected: 1 });
  });

  it('writes a device named twice in one batch once, with its latest presence', async () => {
    const [first, second] = devices;
    const at = server.clock.now();
    const calls = [
      crossPresence(db(), server.networkId, first!.device.id, { last_seen_at: at, disconnected: 0 }),
      crossPresence(db(), server.networkId, second!.device.id, { last_seen_at: at + 1, disconnected: 0 }),
      crossPresence(db(), server.networkId, second!.device.id, { last_seen_at: at + 2, disconnected: 1 }),
    ];
    const [, a, b] = await Promise.all(calls);
    expect(a).toEqual(b);
    expect(await presenceOf(second!.device.id)).toEqual({ last_seen_at: at + 2, disconnected: 1 });
  });

  it('brings a whole fleet back online over HTTP, each device seen so by the API', async () => {
    server.clock.advance(61_000);
    const beats = await Promise.all(devices.map(({ nodeToken }) => heartbeat(server, nodeToken)));
    expect(beats.map((beat) => beat.status)).toEqual(devices.map(() => 200));
    for (const { device } of devices) expect((await getDevice(server, device.id)).body.online).toBe(true);
  });
});

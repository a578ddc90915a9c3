/**
 * SQLite gathers the presence writes of a process into batches (presence-writes.ts). What a
 * batch must keep of writing them one by one: each device's presence stored when its caller is
 * answered, a device that crosses over moves the presence epoch (once per batch, every crossing
 * device logged), a device that timed out while its heartbeat waited crosses rather than
 * quietly coming back, and a gone device is told apart from the others of its batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { disconnect } from '../../src/modules/devices/presence.service.js';
import { BATCH_MS, writePresence } from '../../src/modules/devices/presence-writes.js';
import { ONLINE_WINDOW_MS } from '../../src/modules/network/online.js';
import { presenceChangedSince } from '../../src/modules/network/presence-changes.js';
import { backend, type TestServer } from '../harness.js';
import {
  type EnrolledDevice,
  enroll,
  getDevice,
  heartbeat,
  presenceEpochOf,
  startWithAuthKey,
  storedPresence,
} from './helpers.js';

describe.runIf(backend === 'sqlite')('presence writes in batches (SQLite)', () => {
  let server: TestServer;
  let devices: EnrolledDevice[];
  const db = () => server.database.storage.db;
  const presenceEpoch = () => presenceEpochOf(server);
  const presenceOf = (id: string) => storedPresence(server, id);
  const write = (deviceId: string, lastSeenAt: number, disconnected = 0) =>
    writePresence(db(), server.clock, server.networkId, deviceId, { last_seen_at: lastSeenAt, disconnected });

  beforeAll(async () => {
    let authKey: string;
    ({ server, authKey } = await startWithAuthKey());
    devices = [];
    for (let i = 0; i < 6; i++) devices.push(await enroll(server, authKey, { hostname: `batch-${i}` }));
  });
  afterAll(() => server.close());

  it('stores a batch of staying devices without moving the presence epoch', async () => {
    server.clock.advance(1_000);
    const now = server.clock.now();
    const before = await presenceEpoch();
    const results = await Promise.all(devices.map(({ device }) => write(device.id, now)));
    expect(results).toEqual(devices.map(() => ({ advertised_routes: expect.any(String) })));
    for (const { device } of devices)
      expect(await presenceOf(device.id)).toEqual({ last_seen_at: now, disconnected: 0 });
    expect(await presenceEpoch()).toBe(before);
  });

  it('moves the epoch once for the crossings of a batch, logs them, and answers a gone device with nothing', async () => {
    const now = server.clock.now();
    const [leaving, alsoLeaving, staying] = devices;
    const before = await presenceEpoch();
    const results = await Promise.all([
      write(leaving!.device.id, now, 1),
      write('dev_gone', now),
      write(staying!.device.id, now),
      write(alsoLeaving!.device.id, now, 1),
    ]);
    expect(results).toEqual([
      { advertised_routes: expect.any(String) },
      undefined,
      { advertised_routes: expect.any(String) },
      { advertised_routes: expect.any(String) },
    ]);
    expect(await presenceEpoch()).toBe(before + 1);
    expect((await presenceChangedSince(db(), server.networkId, before, before + 1))?.sort()).toEqual(
      [leaving!.device.id, alsoLeaving!.device.id].sort(),
    );
    expect(await presenceOf(leaving!.device.id)).toEqual({ last_seen_at: now, disconnected: 1 });
    // Back online, in a batch of its own: a crossing again.
    expect(await write(leaving!.device.id, now)).toEqual({ advertised_routes: expect.any(String) });
    expect(await presenceEpoch()).toBe(before + 2);
  });

  it('keeps a device’s writes of one batch in arrival order', async () => {
    const now = server.clock.now();
    const [device] = devices;
    await Promise.all([write(device!.device.id, now + 1), write(device!.device.id, now + 2, 1)]);
    expect(await presenceOf(device!.device.id)).toEqual({ last_seen_at: now + 2, disconnected: 1 });
    await write(device!.device.id, now + 3);
    expect(await presenceOf(device!.device.id)).toEqual({ last_seen_at: now + 3, disconnected: 0 });
  });

  it('crosses a device that timed out while its heartbeat waited for the batch', async () => {
    const [, device] = devices;
    server.clock.advance(1_000);
    const seen = server.clock.now();
    await write(device!.device.id, seen);
    // The next heartbeat arrives just before the device would time out...
    server.clock.advance(ONLINE_WINDOW_MS - 1);
    const before = await presenceEpoch();
    const arrived = server.clock.now();
    const pending = write(device!.device.id, arrived);
    // ...and its batch is written after the deadline: offline at the batch's time, so it crosses.
    server.clock.advance(2);
    expect(await pending).toEqual({ advertised_routes: expect.any(String) });
    expect(await presenceEpoch()).toBe(before + 1);
    expect(await presenceChangedSince(db(), server.networkId, before, before + 1)).toEqual([device!.device.id]);
    expect(await presenceOf(device!.device.id)).toEqual({ last_seen_at: arrived, disconnected: 0 });
  });

  it('writes a disconnect after a heartbeat of the same device still queued, not before it', async () => {
    const [device] = devices;
    const now = server.clock.now();
    await write(device!.device.id, now);
    const actor = {
      networkId: server.networkId,
      type: 'device' as const,
      id: device!.device.id,
      name: null,
      requestId: 'req_test',
      clientAddr: '127.0.0.1',
    };
    const beat = write(device!.device.id, now + 1);
    await disconnect(server.app.ctx, actor);
    await beat;
    // The disconnect's own time (the clock's, not moved) is the device's last contact.
    expect(await presenceOf(device!.device.id)).toEqual({ last_seen_at: now, disconnected: 1 });
  });

  it('gathers writes arriving soon after a batch into the next one', async () => {
    const now = server.clock.now();
    await write(devices[0]!.device.id, now);
    const started = performance.now();
    const later = await Promise.all(devices.slice(1).map(({ device }) => write(device.id, now)));
    // They waited for the batch interval rather than each committing at once.
    expect(performance.now() - started).toBeGreaterThanOrEqual(BATCH_MS - 5);
    expect(later).toEqual(devices.slice(1).map(() => ({ advertised_routes: expect.any(String) })));
  });

  it('answers a heartbeat once its presence is stored, as the API then shows it', async () => {
    server.clock.advance(ONLINE_WINDOW_MS + 1_000);
    const beats = await Promise.all(devices.map(({ nodeToken }) => heartbeat(server, nodeToken)));
    expect(beats.map((beat) => beat.status)).toEqual(devices.map(() => 200));
    for (const { device } of devices) {
      const shown = (await getDevice(server, device.id)).body;
      expect(shown.online).toBe(true);
      expect(shown.lastSeen).toBe(new Date(server.clock.now()).toISOString().replace('.000Z', 'Z'));
    }
  });
});

/**
 * Whole device lists are answered from bodies every shape shares (modules/devices/list-bodies.ts):
 * `/v1/devices`, its `fields=all` and `/api/v2`'s list. A body is built once per change however
 * many callers ask for it meanwhile, and kept only while nothing it shows moved.
 */
import type { DeviceBody } from '@warren/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ListShape, listDevicesBody } from '../../src/modules/devices/devices.service.js';
import { type BodyMade, ListBodies } from '../../src/modules/devices/list-bodies.js';
import { backend } from '../harness.js';
import { type EnrolledDevice, enroll, heartbeat, startWithAuthKey } from './helpers.js';

const made = (version: number, validUntil = Number.POSITIVE_INFINITY): BodyMade => ({
  filter: { tags: [] },
  source: undefined,
  version,
  madeAt: 0,
  validUntil,
  routes: '',
});

/** A build that counts its calls and finishes on a later turn of the event loop. */
function slowBuild(text: string) {
  const calls = { n: 0 };
  const build = async () => {
    calls.n++;
    await new Promise((resolve) => setImmediate(resolve));
    return Buffer.from(text);
  };
  return { calls, build };
}

describe('kept list bodies', () => {
  it('builds a body once for every caller that asks while it is being built', async () => {
    const bodies = new ListBodies();
    const { calls, build } = slowBuild('{"devices":[]}');
    const answers = await Promise.all(
      Array.from({ length: 32 }, () => bodies.body('v1', 'net', made(7), 0, build, () => true)),
    );
    expect(calls.n).toBe(1);
    expect(new Set(answers).size).toBe(1);
    // Kept: a later caller at the same version builds nothing.
    expect(await bodies.body('v1', 'net', made(7), 1, build, () => true)).toBe(answers[0]);
    expect(calls.n).toBe(1);
  });

  it('does not hand a body being built to a caller that read a later version', async () => {
    const bodies = new ListBodies();
    const first = slowBuild('{"devices":[1]}');
    const second = slowBuild('{"devices":[2]}');
    const [a, b] = await Promise.all([
      bodies.body('v1', 'net', made(1), 0, first.build, () => true),
      bodies.body('v1', 'net', made(2), 0, second.build, () => true),
    ]);
    expect(a.toString()).toBe('{"devices":[1]}');
    expect(b.toString()).toBe('{"devices":[2]}');
  });

  it('keeps no body that moved while it was built, nor one past its validity', async () => {
    const bodies = new ListBodies();
    const moved = slowBuild('{"devices":[]}');
    await bodies.body('v1', 'net', made(1), 0, moved.build, () => false);
    await bodies.body('v1', 'net', made(1), 0, moved.build, () => true);
    expect(moved.calls.n).toBe(2);
    const timed = slowBuild('{"devices":[]}');
    await bodies.body('v1', 'net', made(3, 100), 0, timed.build, () => true);
    await bodies.body('v1', 'net', made(3, 100), 100, timed.build, () => true);
    expect(timed.calls.n).toBe(2);
  });
});

describe('device list bodies shared by every caller', () => {
  let server: Awaited<ReturnType<typeof startWithAuthKey>>['server'];
  const devices: EnrolledDevice[] = [];
  const serialized: DeviceBody[] = [];
  const shape: ListShape = {
    name: 'test-list',
    details: true,
    serialize: (record) => {
      serialized.push(record);
      return JSON.stringify(record);
    },
  };

  beforeAll(async () => {
    let authKey: string;
    ({ server, authKey } = await startWithAuthKey());
    for (let i = 0; i < 3; i++) devices.push(await enroll(server, authKey, { hostname: `poll${i}` }));
  });
  afterAll(() => server.close());

  it.runIf(backend === 'sqlite')('answers concurrent polls after a heartbeat with one body built once', async () => {
    const ctx = server.app.ctx;
    const poll = () => listDevicesBody(ctx, server.networkId, {}, shape);
    await poll();
    server.clock.advance(1000);
    expect((await heartbeat(server, devices[1]!.nodeToken)).status).toBe(200);
    serialized.length = 0;
    const answers = await Promise.all(Array.from({ length: 32 }, poll));
    expect(new Set(answers).size).toBe(1);
    // Only the device whose presence moved is serialised again, once.
    expect(serialized.map((record) => record.id)).toEqual([devices[1]!.device.id]);
    const listed = JSON.parse(answers[0]!.toString()).devices;
    expect(listed.find((d: DeviceBody) => d.id === devices[1]!.device.id).lastSeen).toBe(
      new Date(server.clock.now()).toISOString(),
    );
  });
});

/**
 * Whole device lists are answered from bodies every shape shares (modules/devices/list-bodies.ts):
 * `/v1/devices`, its `fields=all` and `/api/v2`'s list. A body is built once per change however
 * many callers ask for it meanwhile, and kept only while nothing it shows moved.
 */
import type { DeviceBody } from '@warren/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ListShape, listDevicesBody } from '../../src/modules/devices/devices.service.js';
import { type BodyMade, ListBodies } from '../../src/modules/devices/list-bodies.js';
import { deviceListStamp } from '../../src/modules/devices/list-stamp.js';
import { backend, json, type SecondInstance, secondInstance } from '../harness.js';
import {
  type EnrolledDevice,
  enroll,
  getDevice,
  heartbeat,
  listFields,
  nodeCall,
  startWithAuthKey,
} from './helpers.js';

const made = (version: number, routes = ''): BodyMade => ({
  filter: { tags: [] },
  source: undefined,
  version,
  madeAt: 0,
  validUntil: Number.POSITIVE_INFINITY,
  routes,
});

/** A build that counts its calls and finishes on a later turn of the event loop. */
function slowBuild(text: string, validUntil = Number.POSITIVE_INFINITY) {
  const calls = { n: 0 };
  const build = async () => {
    calls.n++;
    await new Promise((resolve) => setImmediate(resolve));
    return { body: Buffer.from(text), validUntil };
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

  it('builds one body at a time, shared by every caller that read a later version meanwhile', async () => {
    // With a heartbeat every few milliseconds, each caller reads a version of its own: they
    // must not each start a build beside the one in flight.
    const bodies = new ListBodies();
    const first = slowBuild('{"devices":[1]}');
    const later = Array.from({ length: 10 }, (_, i) => slowBuild(`{"devices":[${i + 2}]}`));
    const inFlight = bodies.body('v1', 'net', made(1), 0, first.build, () => true);
    const answers = await Promise.all(
      later.map(({ build }, i) => bodies.body('v1', 'net', made(i + 2), 0, build, () => true)),
    );
    expect((await inFlight).toString()).toBe('{"devices":[1]}');
    // One more build, started after all ten arrived, answers all of them.
    expect(later.reduce((sum, { calls }) => sum + calls.n, 0)).toBe(1);
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]!.toString()).toBe('{"devices":[2]}');
  });

  it('lets a waiting caller through while the build in flight checks the database', async () => {
    // On PostgreSQL the check that a body is still current is a query: a caller waiting for
    // its turn must leave the event loop free for that answer, not spin until it comes.
    const bodies = new ListBodies();
    const first = slowBuild('{"devices":[1]}');
    const later = slowBuild('{"devices":[2]}');
    const queried = () => new Promise<boolean>((resolve) => setTimeout(() => resolve(true), 5));
    const inFlight = bodies.body('v1', 'net', made(1), 0, first.build, queried);
    const waiting = bodies.body('v1', 'net', made(2), 0, later.build, queried);
    const [a, b] = await Promise.all([inFlight, waiting]);
    expect(a.toString()).toBe('{"devices":[1]}');
    expect(b.toString()).toBe('{"devices":[2]}');
    expect(later.calls.n).toBe(1);
  });

  it('shares a later build only with callers that read the same routes', async () => {
    const bodies = new ListBodies();
    const first = slowBuild('{"devices":[1]}');
    const withOne = slowBuild('{"devices":["r1"]}');
    const withTwo = slowBuild('{"devices":["r2"]}');
    const inFlight = bodies.body('v1', 'net', made(1), 0, first.build, () => true);
    const [one, two] = await Promise.all([
      bodies.body('v1', 'net', made(2, 'r1'), 0, withOne.build, () => true),
      bodies.body('v1', 'net', made(2, 'r2'), 0, withTwo.build, () => true),
    ]);
    await inFlight;
    expect(one.toString()).toBe('{"devices":["r1"]}');
    expect(two.toString()).toBe('{"devices":["r2"]}');
  });

  it('keeps no body that moved while it was built, nor one past its validity', async () => {
    const bodies = new ListBodies();
    const moved = slowBuild('{"devices":[]}');
    await bodies.body('v1', 'net', made(1), 0, moved.build, () => false);
    await bodies.body('v1', 'net', made(1), 0, moved.build, () => true);
    expect(moved.calls.n).toBe(2);
    const timed = slowBuild('{"devices":[]}', 100);
    await bodies.body('v1', 'net', made(3), 0, timed.build, () => true);
    await bodies.body('v1', 'net', made(3), 99, timed.build, () => true);
    expect(timed.calls.n).toBe(1);
    await bodies.body('v1', 'net', made(3), 100, timed.build, () => true);
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

  it('answers concurrent polls after a heartbeat with one body built once', async () => {
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

/**
 * Another instance on the same database keeps its bodies too, and learns of every change only
 * through the database: after each write through the first instance, the second's lists (read
 * before the write, so their bodies are kept) must equal the first's per-device reads. On
 * PostgreSQL this is the list stamp's proof (migration 029); on SQLite, the index's.
 */
describe('kept list bodies served by another instance', () => {
  let server: Awaited<ReturnType<typeof startWithAuthKey>>['server'];
  let second: SecondInstance;
  const devices: EnrolledDevice[] = [];

  beforeAll(async () => {
    let authKey: string;
    ({ server, authKey } = await startWithAuthKey({ tags: ['tag:web', 'tag:db'], keyTags: ['tag:web'] }));
    second = await secondInstance(server);
    devices.push(await enroll(server, authKey, { hostname: 'router', advertiseRoutes: ['10.42.0.0/16'] }));
    for (let i = 0; i < 3; i++) devices.push(await enroll(server, authKey, { hostname: `peer${i}` }));
  });
  afterAll(async () => {
    await second.close();
    await server.close();
  });

  const fromSecond = async (path: string) => {
    const res = await second.get(path);
    expect(res.status).toBe(200);
    return (await json(res)).devices as any[];
  };
  const fromFirst = async (path: string) => {
    const res = await server.call('GET', path);
    expect(res.status).toBe(200);
    return json(res);
  };

  /** Every whole list from the second instance, each read twice (the second from its kept body). */
  async function lists() {
    const read = async () => ({
      list: await fromSecond('/v1/devices'),
      details: await fromSecond('/v1/devices?fields=all'),
      web: await fromSecond('/v1/devices?tag=tag:web&online=true'),
      offline: await fromSecond('/v1/devices?online=false'),
      tailscale: await fromSecond('/api/v2/tailnet/-/devices?fields=all'),
    });
    const first = await read();
    expect(await read()).toEqual(first);
    return first;
  }

  /** The second instance's lists equal the first's per-device reads, device by device. */
  async function expectCurrent() {
    const { list, details, web, offline, tailscale } = await lists();
    const expected = await Promise.all(details.map(async (d) => (await getDevice(server, d.id)).body));
    expect(details).toEqual(expected);
    expect(list).toEqual(expected.map(listFields));
    expect(web).toEqual(expected.filter((d) => d.online && d.tags.includes('tag:web')).map(listFields));
    expect(offline).toEqual(expected.filter((d) => !d.online).map(listFields));
    const tailscaleExpected = await Promise.all(tailscale.map((d) => fromFirst(`/api/v2/device/${d.id}?fields=all`)));
    expect(tailscale).toEqual(tailscaleExpected);
    expect(tailscale.map((d) => d.id)).toEqual(expected.map((d) => d.id));
    return new Map(expected.map((d) => [d.id, d]));
  }

  it('follows a rename, a tag change, a route approval, presence and a deletion', async () => {
    const [router, peer0, peer1, peer2] = devices.map((d) => d.device.id) as string[];
    await expectCurrent();

    const rename = await server.call('POST', `/api/v2/device/${peer0}/name`, { body: { name: 'renamed' } });
    expect(rename.status).toBe(200);
    expect((await expectCurrent()).get(peer0!).name).toBe('renamed');

    const tags = await server.call('POST', `/v1/devices/${peer1}/tags`, { body: { tags: ['tag:db'] } });
    expect(tags.status).toBe(200);
    expect((await expectCurrent()).get(peer1!).tags).toEqual(['tag:db']);

    const route = (await fromFirst(`/v1/routes?device=${router}`)).routes[0];
    expect((await server.call('POST', `/v1/routes/${route.id}/approve`)).status).toBe(200);
    expect((await expectCurrent()).get(router!).routes[0]).toMatchObject({ state: 'approved', primary: true });

    // A heartbeat moves only lastSeen.
    server.clock.advance(5_000);
    expect((await heartbeat(server, devices[3]!.nodeToken)).status).toBe(200);
    expect((await expectCurrent()).get(peer2!).lastSeen).toBe(new Date(server.clock.now()).toISOString());

    expect((await nodeCall(server, devices[3]!.nodeToken, 'disconnect')).status).toBe(204);
    expect((await expectCurrent()).get(peer2!).online).toBe(false);

    // Time alone: the others time out with nothing written.
    server.clock.advance(60_000);
    expect([...(await expectCurrent()).values()].every((d) => !d.online)).toBe(true);

    expect((await server.call('DELETE', `/v1/devices/${peer0}`)).status).toBe(204);
    expect((await expectCurrent()).has(peer0!)).toBe(false);
  });

  it('follows a change of the network DNS domain, which every dnsName shows', async () => {
    await expectCurrent();
    const patched = await server.call('PATCH', '/v1/network', { body: { dns: { domain: 'corp.example.com' } } });
    expect(patched.status).toBe(200);
    const current = await expectCurrent();
    expect(current.size).toBeGreaterThan(0);
    for (const device of current.values()) expect(device.dnsName).toBe(`${device.name}.corp.example.com`);
  });

  it('follows one transaction that changes every device, which moves the stamp once', async () => {
    await expectCurrent();
    const { db } = server.database.storage;
    const stamp = () => (backend === 'postgres' ? deviceListStamp(db, server.networkId) : Promise.resolve('0'));
    const before = await stamp();
    const seen = server.clock.now() - 1_000;
    await db.transaction().execute(async (trx) => {
      for (const { device } of devices) {
        await trx
          .updateTable('devices')
          .set({ last_seen_at: seen, disconnected: 0 })
          .where('id', '=', device.id)
          .execute();
      }
    });
    if (backend === 'postgres') expect(BigInt(await stamp())).toBe(BigInt(before) + 1n);
    const current = await expectCurrent();
    expect([...current.values()].map((d) => d.online)).toEqual([true, true, true]);
  });
});

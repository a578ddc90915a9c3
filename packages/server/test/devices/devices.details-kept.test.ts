/**
 * Detail records (`?fields=all`, `/api/v2`'s device list) are kept between calls by each
 * server, with the bodies made from them (modules/devices/device-records.ts, list-bodies.ts).
 * A second instance on the same database serves the lists here, so every change reaches it
 * only through the database; the expected records are the first instance's
 * `GET /v1/devices/{id}`, which reads the device and its routes on every call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTags } from '../acl/helpers.js';
import { json, type SecondInstance, secondInstance, startServer, type TestServer } from '../harness.js';
import { createAuthKey, type EnrolledDevice, enroll, getDevice, heartbeat, newNodeKey, register } from './helpers.js';

describe('detail records kept between calls', () => {
  let server: TestServer;
  let second: SecondInstance;
  let a: EnrolledDevice;
  let b: EnrolledDevice;
  let keyB: string;

  beforeAll(async () => {
    server = await startServer();
    await defineTags(server, ['tag:router-a', 'tag:router-b']);
    second = await secondInstance(server);
    const keyA = (await createAuthKey(server, { reusable: true, tags: ['tag:router-a'] })).key;
    keyB = (await createAuthKey(server, { reusable: true, tags: ['tag:router-b'] })).key;
    a = await enroll(server, keyA, { hostname: 'ha-a', advertiseRoutes: ['10.99.0.0/16'] });
    b = await enroll(server, keyB, { hostname: 'ha-b', advertiseRoutes: ['10.99.0.0/16'], clientVersion: '1.0.0' });
  });
  afterAll(async () => {
    await second.close();
    await server.close();
  });

  const fromSecond = async (path: string) => {
    const res = await second.get(path);
    expect(res.status).toBe(200);
    return json(res);
  };

  /** `?fields=all` from the second instance, checked against the first's per-device reads. */
  async function details(query = '') {
    const listed = (await fromSecond(`/v1/devices?fields=all${query}`)).devices as any[];
    const expected = await Promise.all(listed.map(async (d) => (await getDevice(server, d.id)).body));
    expect(listed).toEqual(expected);
    return new Map(listed.map((d) => [d.id, d]));
  }

  /** `/api/v2`'s list from the second instance, by device id. */
  async function tailscaleList(query = '') {
    const listed = (await fromSecond(`/api/v2/tailnet/-/devices?fields=all${query}`)).devices as any[];
    return new Map(listed.map((d) => [d.id, d]));
  }

  const approve = async (device: EnrolledDevice) => {
    const routes = (await json(await server.call('GET', `/v1/routes?device=${device.device.id}`))).routes;
    expect((await server.call('POST', `/v1/routes/${routes[0].id}/approve`)).status).toBe(200);
  };

  it('shows a route approved on the other instance, in records and in the kept body', async () => {
    let listed = await details();
    expect(listed.get(a.device.id).routes[0]).toMatchObject({ state: 'pending', primary: false });
    expect((await tailscaleList()).get(a.device.id).enabledRoutes).toEqual([]);
    // Twice: the second answer is the kept body.
    await details();

    await approve(a);
    await heartbeat(server, a.nodeToken);
    listed = await details();
    expect(listed.get(a.device.id).routes[0]).toMatchObject({ state: 'approved', primary: true });
    expect((await tailscaleList()).get(a.device.id).enabledRoutes).toEqual(['10.99.0.0/16']);
  });

  it('hands the primary over when the first router times out, with no write in between', async () => {
    server.clock.advance(1000);
    await approve(b);
    await heartbeat(server, a.nodeToken);
    await heartbeat(server, b.nodeToken);
    // Only b is listed: its body is valid until b times out, but its route's primary follows a.
    let listed = await details('&tag=tag:router-b');
    expect([...listed.keys()]).toEqual([b.device.id]);
    expect(listed.get(b.device.id).routes[0].primary).toBe(false);
    const online = await fromSecond('/api/v2/tailnet/-/devices');
    expect(online.devices.find((d: any) => d.id === a.device.id).connectedToControl).toBe(true);

    server.clock.advance(45_000);
    await heartbeat(server, b.nodeToken);
    expect((await details('&tag=tag:router-b')).get(b.device.id).routes[0].primary).toBe(false);
    expect((await details()).get(a.device.id).routes[0].primary).toBe(true);

    // a's heartbeat is now too old: nothing is written, yet b serves the prefix.
    server.clock.advance(20_000);
    listed = await details('&tag=tag:router-b');
    expect(listed.get(b.device.id).routes[0].primary).toBe(true);
    const everyone = await details();
    expect(everyone.get(a.device.id)).toMatchObject({ online: false, routes: [{ primary: false }] });
    // The same records through /api/v2, whose JSON is kept per record.
    const offline = await fromSecond('/api/v2/tailnet/-/devices');
    expect(offline.devices.find((d: any) => d.id === a.device.id).connectedToControl).toBe(false);
    expect(offline.devices.find((d: any) => d.id === b.device.id).connectedToControl).toBe(true);
  });

  it('shows a column only the detail record carries, changed by a re-enrollment', async () => {
    const nodeKey = newNodeKey();
    const first = await json(await register(server, keyB, { hostname: 'cv', nodeKey, clientVersion: '1.0.0' }));
    expect((await details()).get(first.device.id).clientVersion).toBe('1.0.0');
    expect((await tailscaleList()).get(first.device.id).clientVersion).toBe('1.0.0');

    // Same hostname, tags, owner and clock: only the client version changes.
    const again = await register(server, keyB, { hostname: 'cv', nodeKey, clientVersion: '1.2.3' });
    expect(again.status).toBe(201);
    expect((await details()).get(first.device.id).clientVersion).toBe('1.2.3');
    expect((await tailscaleList()).get(first.device.id).clientVersion).toBe('1.2.3');
  });

  it('leaves out a device deleted on the other instance', async () => {
    await details();
    expect((await server.call('DELETE', `/v1/devices/${a.device.id}`)).status).toBe(204);
    expect((await details()).has(a.device.id)).toBe(false);
    expect((await tailscaleList()).has(a.device.id)).toBe(false);
    expect((await details('&tag=tag:router-b')).get(b.device.id).routes[0].primary).toBe(true);
  });
});

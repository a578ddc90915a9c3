/**
 * A connection entry's source is the reporter: one of its addresses (in any spelling,
 * IPv4-mapped IPv6 included) or an address inside an approved route it serves. Anything else
 * refuses the whole batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EnrolledDevice, enroll, heartbeat, startWithAuthKey } from '../devices/helpers.js';
import { json, type TestServer } from '../harness.js';
import { entry, readAll, type TestDevice } from './helpers.js';

describe('connection log: sources are the reporter’s', () => {
  let server: TestServer;
  let gw: TestDevice;
  let peer: TestDevice;
  let gwEnrolled: EnrolledDevice;
  let peerEnrolled: EnrolledDevice;
  let exitKey: string;

  /** The logs helpers' view of an enrolled device. */
  const asTestDevice = (e: EnrolledDevice): TestDevice => ({
    id: e.device.id,
    name: e.device.name,
    token: e.nodeToken,
    networkId: server.networkId,
    addrIndex: 0,
    ipv4: e.device.addresses[0],
    ipv6: e.device.addresses[1],
  });

  const routeId = async (deviceId: string, prefix: string): Promise<string> => {
    const { routes } = await json(await server.call('GET', `/v1/routes?device=${deviceId}`));
    return routes.find((r: { prefix: string }) => r.prefix === prefix).id;
  };
  const transition = async (deviceId: string, prefix: string, verb: 'approve' | 'disable') => {
    const res = await server.call('POST', `/v1/routes/${await routeId(deviceId, prefix)}/${verb}`);
    expect(res.status).toBe(200);
  };

  beforeAll(async () => {
    let authKey: string;
    ({ server, authKey } = await startWithAuthKey());
    exitKey = authKey;
    // gw serves 10.60.0.0/24 (approved), 10.61.0.0/24 (pending), 10.62.0.0/24 (disabled),
    // 10.64.0.0/24 (approved, then withdrawn); peer serves 10.63.0.0/24 (approved).
    gwEnrolled = await enroll(server, authKey, {
      hostname: 'gw',
      advertiseRoutes: ['10.60.0.0/24', '10.61.0.0/24', '10.62.0.0/24', '10.64.0.0/24', 'fd12:60::/64'],
    });
    peerEnrolled = await enroll(server, authKey, { hostname: 'peer', advertiseRoutes: ['10.63.0.0/24'] });
    gw = asTestDevice(gwEnrolled);
    peer = asTestDevice(peerEnrolled);
    await transition(gw.id, '10.60.0.0/24', 'approve');
    await transition(gw.id, 'fd12:60::/64', 'approve');
    await transition(gw.id, '10.62.0.0/24', 'approve');
    await transition(gw.id, '10.62.0.0/24', 'disable');
    await transition(gw.id, '10.64.0.0/24', 'approve');
    await transition(peer.id, '10.63.0.0/24', 'approve');
    const still = ['10.60.0.0/24', '10.61.0.0/24', '10.62.0.0/24', 'fd12:60::/64'];
    expect((await heartbeat(server, gw.token, { advertiseRoutes: still })).status).toBe(200);
  });
  afterAll(() => server.close());

  const stored = async () => (await readAll(server, { since: '1d', limit: 1000 })).entries;
  const send = (from: TestDevice, entries: unknown[]) =>
    server.call('POST', '/v1/node/connections', { key: from.token, body: { entries } });
  const withSrc = (addr: string, to: TestDevice | string = peer) => entry(gw, to, { src: { addr } });

  it('accepts the reporter’s own addresses, IPv4-mapped IPv6 stored as the IPv4 address', async () => {
    const before = (await stored()).length;
    const res = await send(gw, [
      withSrc(`${gw.ipv4}:40000`),
      withSrc(`[${gw.ipv6}]:40001`, `[${peer.ipv6}]:443`),
      withSrc(`[::ffff:${gw.ipv4}]:40002`, `[::ffff:${peer.ipv4}]:443`),
    ]);
    expect(res.status, await res.clone().text()).toBe(202);
    const added = (await stored()).slice(before);
    expect(added.map((e) => e.src)).toEqual([
      { deviceId: gw.id, deviceName: gw.name, addr: `${gw.ipv4}:40000` },
      { deviceId: gw.id, deviceName: gw.name, addr: `[${gw.ipv6}]:40001` },
      { deviceId: gw.id, deviceName: gw.name, addr: `${gw.ipv4}:40002` },
    ]);
    // the mapped destination resolves to the peer like its IPv4 address
    expect(added[2].dst).toEqual({ deviceId: peer.id, deviceName: peer.name, addr: `${peer.ipv4}:443` });
  });

  it('accepts sources inside an approved route the reporter serves', async () => {
    const before = (await stored()).length;
    const res = await send(gw, [
      withSrc('10.60.0.9:5000'),
      withSrc('[fd12:60::9]:5000'),
      withSrc('[::ffff:10.60.0.10]:5001'),
    ]);
    expect(res.status, await res.clone().text()).toBe(202);
    const added = (await stored()).slice(before);
    expect(added.map((e) => e.src.addr)).toEqual(['10.60.0.9:5000', '[fd12:60::9]:5000', '10.60.0.10:5001']);
    expect(added.every((e) => e.src.deviceId === gw.id)).toBe(true);
  });

  it('refuses the whole batch for any other source, naming the entry', async () => {
    const cases: [string, string][] = [
      ['another device’s IPv4 address', `${peer.ipv4}:1234`],
      ['another device’s IPv6 address', `[${peer.ipv6}]:1234`],
      ['another device’s address, IPv4-mapped', `[::ffff:${peer.ipv4}]:1234`],
      ['an unallocated mesh address', '100.64.200.1:1234'],
      ['a pending route', '10.61.0.5:1234'],
      ['a disabled route', '10.62.0.5:1234'],
      ['a withdrawn route', '10.64.0.5:1234'],
      ['a route another device serves', '10.63.0.5:1234'],
      ['a route another device serves, IPv4-mapped', '[::ffff:10.63.0.5]:1234'],
      ['an address outside every route', '203.0.113.7:1234'],
      ['next to an approved route', '10.60.1.1:1234'],
    ];
    const before = (await stored()).length;
    for (const [what, addr] of cases) {
      const res = await send(gw, [withSrc(`${gw.ipv4}:1`), withSrc('10.60.0.9:2'), withSrc(addr)]);
      const body = await json(res);
      expect(res.status, what).toBe(400);
      expect(body, what).toMatchObject({ code: 'invalid_request', index: 2 });
      expect(body.detail, what).toContain('entries[2]');
      expect(body.detail, what).toContain('src.addr');
    }
    expect((await stored()).length).toBe(before);
  });

  it('lets an exit node vouch for internet sources, never for its peers’ mesh addresses', async () => {
    const exit = asTestDevice(
      await enroll(server, exitKey, { hostname: 'exit', advertiseRoutes: ['0.0.0.0/0', '::/0'] }),
    );
    await transition(exit.id, '0.0.0.0/0', 'approve');
    await transition(exit.id, '::/0', 'approve');
    const from = (addr: string) => send(exit, [entry(exit, gw, { src: { addr } })]);
    expect((await from('203.0.113.7:443')).status).toBe(202);
    expect((await from('[2001:db8::7]:443')).status).toBe(202);
    for (const addr of [`${gw.ipv4}:1`, `[${gw.ipv6}]:1`, `[::ffff:${gw.ipv4}]:1`, '100.64.200.1:1', '127.0.0.1:1']) {
      expect((await from(addr)).status, addr).toBe(400);
    }
  });

  it('lets each router vouch only for its own routes', async () => {
    expect((await send(peer, [entry(peer, gw, { src: { addr: '10.63.0.5:1234' } })])).status).toBe(202);
    expect((await send(peer, [entry(peer, gw, { src: { addr: '10.60.0.5:1234' } })])).status).toBe(400);
  });
});

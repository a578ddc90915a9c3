/**
 * Prefixes Warren never accepts as routes: the mesh's own ranges, loopback, link-local,
 * multicast, unspecified and broadcast, and IPv4-mapped IPv6. Refused at enrollment and at
 * heartbeat for the whole request; default routes stay accepted (exit nodes).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { countDevices, enroll, expectProblem, heartbeat, register, startWithAuthKey } from '../devices/helpers.js';
import { json, type TestServer } from '../harness.js';

/** Each class of reserved prefix, with a fragment the problem's detail must carry. */
const REFUSED: [string, string][] = [
  // the mesh's own ranges, and anything but a default route that overlaps them
  ['100.64.0.0/10', 'mesh'],
  ['100.64.0.7/32', 'mesh'],
  ['100.100.0.0/16', 'mesh'],
  ['100.0.0.0/8', '100.64.0.0/10'],
  ['64.0.0.0/2', '100.64.0.0/10'],
  ['fd7a:115c:a1e0::/48', 'mesh'],
  ['fd7a:115c:a1e0:ab12::/64', 'mesh'],
  ['fd00::/8', 'fd7a:115c:a1e0::/48'],
  ['fc00::/7', 'fd7a:115c:a1e0::/48'],
  // loopback
  ['127.0.0.0/8', 'loopback'],
  ['127.0.0.1/32', 'loopback'],
  ['::1/128', 'loopback'],
  // link-local
  ['169.254.0.0/16', 'link-local'],
  ['169.254.169.254/32', 'link-local'],
  ['fe80::/10', 'link-local'],
  ['fe80::/64', 'link-local'],
  // multicast
  ['224.0.0.0/4', 'multicast'],
  ['239.1.0.0/16', 'multicast'],
  ['ff00::/8', 'multicast'],
  ['ff02::1/128', 'multicast'],
  // unspecified, and prefixes holding it
  ['0.0.0.0/32', 'unspecified'],
  ['0.0.0.0/8', 'unspecified'],
  ['::/128', 'unspecified'],
  ['::/64', 'loopback'],
  // IPv4 broadcast
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'broadcast'],
  // IPv4-mapped IPv6: judged as the IPv4 prefix it maps, and refused either way
  ['::ffff:10.0.0.0/104', 'advertise 10.0.0.0/8'],
  ['::ffff:a00:0/104', 'advertise 10.0.0.0/8'],
  ['::ffff:100.64.0.0/106', 'mesh'],
  ['::ffff:127.0.0.1/128', 'loopback'],
  ['::ffff:0.0.0.0/96', 'advertise 0.0.0.0/0'],
];

/** Prefixes near the reserved ones that stay accepted. */
const ACCEPTED = ['0.0.0.0/0', '::/0', '100.128.0.0/9', '10.0.0.0/8', 'fd12:3456::/32', '2001:db8::/32', '1.0.0.0/8'];

describe('reserved prefixes', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
  });
  afterAll(() => server.close());

  const routesOf = async (deviceId: string): Promise<string[]> => {
    const res = await server.call('GET', `/v1/routes?device=${deviceId}`);
    expect(res.status).toBe(200);
    return ((await json(res)).routes as { prefix: string }[]).map((r) => r.prefix).sort();
  };

  it('refuses each class at enrollment, naming the range, with nothing enrolled', async () => {
    const before = await countDevices(server);
    for (const [bad, why] of REFUSED) {
      const res = await register(server, authKey, { advertiseRoutes: ['10.1.0.0/16', bad] });
      const body = await expectProblem(res, 400, 'invalid_prefix');
      expect(body.detail).toContain(bad);
      expect(body.detail).toContain(why);
    }
    expect(await countDevices(server)).toBe(before);
  });

  it('refuses each class at heartbeat for the whole request, leaving the advertised set as it was', async () => {
    const { device, nodeToken } = await enroll(server, authKey, { hostname: 'hb', advertiseRoutes: ['10.2.0.0/16'] });
    for (const [bad, why] of REFUSED) {
      const res = await server.call('POST', '/v1/node/heartbeat', {
        key: nodeToken,
        body: { advertiseRoutes: ['10.3.0.0/16', bad] },
      });
      const body = await expectProblem(res, 400, 'invalid_prefix');
      expect(body.detail).toContain(why);
    }
    expect(await routesOf(device.id)).toEqual(['10.2.0.0/16']);
    // and a good set still goes through afterwards
    expect((await heartbeat(server, nodeToken, { advertiseRoutes: ['10.3.0.0/16'] })).status).toBe(200);
    expect(await routesOf(device.id)).toEqual(['10.2.0.0/16', '10.3.0.0/16']);
  });

  it('accepts default routes (exit nodes) and neighbours of the reserved ranges', async () => {
    const { device, nodeToken } = await enroll(server, authKey, { hostname: 'exit', advertiseRoutes: ACCEPTED });
    expect(await routesOf(device.id)).toEqual(
      ['0.0.0.0/0', '1.0.0.0/8', '10.0.0.0/8', '100.128.0.0/9', '2001:db8::/32', '::/0', 'fd12:3456::/32'].sort(),
    );
    expect((await heartbeat(server, nodeToken, { advertiseRoutes: ['0.0.0.0/0', '::/0'] })).status).toBe(200);
  });

  it('no longer approves a reserved route recorded before such prefixes were refused', async () => {
    const { device } = await enroll(server, authKey, { hostname: 'legacy' });
    const id = newId('route');
    await server.database.storage.db
      .insertInto('routes')
      .values({
        id,
        network_id: server.networkId,
        device_id: device.id,
        prefix: '100.64.0.0/10',
        state: 'pending',
        advertised: 1,
        auto_approved: 0,
        approved_at: null,
        approved_by: null,
        created_at: server.clock.now(),
      })
      .execute();
    const body = await expectProblem(await server.call('POST', `/v1/routes/${id}/approve`), 409, 'invalid_state');
    expect(body.detail).toContain('mesh');
    const route = (await json(await server.call('GET', `/v1/routes?device=${device.id}`))).routes[0];
    expect(route).toMatchObject({ id, state: 'pending' });
  });
});

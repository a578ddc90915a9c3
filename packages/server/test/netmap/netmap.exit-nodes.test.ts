/**
 * Exit nodes: a device advertising 0.0.0.0/0 and ::/0, approved by hand or by
 * autoApprovers.exitNode, is a peer of every device allowed to reach autogroup:internet, and
 * while online it carries both default routes in their allowedIPs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPolicy } from '../acl/helpers.js';
import { getDevice, nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { createUser, type Devices, enrollAll, netmap, peerNames } from './helpers.js';

const POLICY = `{
  "tagOwners": { "tag:exit": ["autogroup:admin"], "tag:ci": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["ana@example.com"], "dst": ["autogroup:internet:*"] },
    { "action": "accept", "src": ["tag:ci"], "dst": ["autogroup:internet:443"] },
  ],
  "autoApprovers": { "exitNode": ["tag:exit"] },
}`;

const EXIT = ['0.0.0.0/0', '::/0'];

describe('exit nodes', () => {
  let server: TestServer;
  let d: Devices;
  /** The default routes a viewer's netmap carries for each peer, by name. */
  const exitsSeen = async (viewer: string) => {
    const view = (await netmap(server, d[viewer].nodeToken)).body;
    return Object.fromEntries(
      view.peers.map((p: any) => [p.name, p.allowedIPs.filter((ip: string) => EXIT.includes(ip))]),
    );
  };
  const routesOf = async (device: string) =>
    (await json(await server.call('GET', `/v1/routes?device=${device}`))).routes as any[];

  beforeAll(async () => {
    server = await startServer();
    await applyPolicy(server, POLICY);
    await createUser(server, 'ana@example.com');
    await createUser(server, 'bo@example.com');
    d = await enrollAll(server, {
      laptop: { user: 'ana@example.com' },
      other: { user: 'bo@example.com' },
      ci: { tags: ['tag:ci'] },
      'exit-auto': { tags: ['tag:exit'], advertiseRoutes: EXIT },
      'exit-hand': { user: 'bo@example.com', advertiseRoutes: EXIT },
      // One default route alone cannot be advertised (routes/prefixes.ts), but one of the two
      // can be approved without the other.
      'half-exit': { user: 'bo@example.com', advertiseRoutes: EXIT },
    });
    const v4 = (await routesOf('half-exit')).find((r) => r.prefix === '0.0.0.0/0');
    expect((await server.call('POST', `/v1/routes/${v4.id}/approve`)).status).toBe(200);
  });
  afterAll(() => server.close());

  it('approves an exit node by autoApprovers.exitNode, and marks its routes and record', async () => {
    const routes = await routesOf('exit-auto');
    expect(routes.map((r) => [r.prefix, r.state, r.autoApproved, r.exitNode, r.primary])).toEqual(
      expect.arrayContaining([
        ['0.0.0.0/0', 'approved', true, true, true],
        ['::/0', 'approved', true, true, true],
      ]),
    );
    expect((await getDevice(server, d['exit-auto'].device.id)).body.exitNode).toBe(true);
    // One default route approved alone is no exit node.
    expect((await getDevice(server, d['half-exit'].device.id)).body.exitNode).toBe(false);
    expect((await getDevice(server, d.laptop.device.id)).body.exitNode).toBe(false);
  });

  it('gives the devices allowed to reach autogroup:internet every online exit node, with both default routes', async () => {
    expect(await exitsSeen('laptop')).toEqual({ 'exit-auto': EXIT });
    expect(await exitsSeen('ci')).toEqual({ 'exit-auto': EXIT });
    expect(await peerNames(server, d.other)).toEqual([]);
    // The exit node sees the devices that may use it.
    expect(await peerNames(server, d['exit-auto'])).toEqual(['ci', 'laptop']);
  });

  it('adds an exit node approved by hand, each of its routes on its own', async () => {
    for (const r of await routesOf('exit-hand')) {
      expect((await server.call('POST', `/v1/routes/${r.id}/approve`)).status).toBe(200);
    }
    expect(await exitsSeen('laptop')).toEqual({ 'exit-auto': EXIT, 'exit-hand': EXIT });
    expect((await getDevice(server, d['exit-hand'].device.id)).body.exitNode).toBe(true);
  });

  it('keeps an offline exit node a peer, without the default routes', async () => {
    expect((await nodeCall(server, d['exit-auto'].nodeToken, 'disconnect')).status).toBe(204);
    expect(await exitsSeen('laptop')).toEqual({ 'exit-auto': [], 'exit-hand': EXIT });
    const routes = await routesOf('exit-auto');
    expect(routes.every((r) => r.primary === false)).toBe(true);
  });

  it('drops an exit node when one of its default routes is disabled', async () => {
    const v6 = (await routesOf('exit-hand')).find((r) => r.prefix === '::/0');
    expect((await server.call('POST', `/v1/routes/${v6.id}/disable`)).status).toBe(200);
    expect(await exitsSeen('laptop')).toEqual({ 'exit-auto': [] });
    expect((await getDevice(server, d['exit-hand'].device.id)).body.exitNode).toBe(false);
  });
});

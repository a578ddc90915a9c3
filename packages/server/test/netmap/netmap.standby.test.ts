/**
 * High availability: every router of an approved route is a peer of the devices a rule pairs
 * with that route (as source or destination), standby included, so failover needs no new
 * peer; only the primary carries the prefix in allowedIPs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPolicy } from '../acl/helpers.js';
import { nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { type Devices, enrollAll, netmap, peerNames } from './helpers.js';

// No rule names the routers themselves: they are peers only through the subnet they serve.
const POLICY = `{
  "tagOwners": { "tag:gw": ["autogroup:admin"], "tag:client": ["autogroup:admin"], "tag:db": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["tag:client"], "dst": ["10.5.0.0/16:443"] },
    { "action": "accept", "src": ["10.7.0.0/24"], "dst": ["tag:db:5432"] },
  ],
}`;

describe('standby routers', () => {
  let server: TestServer;
  let d: Devices;
  const approveAll = async () => {
    const { routes } = await json(await server.call('GET', '/v1/routes'));
    // Approval order decides primary: the "-a" router of each prefix first.
    routes.sort((a: any, b: any) => a.deviceName.localeCompare(b.deviceName));
    for (const r of routes) {
      expect((await server.call('POST', `/v1/routes/${r.id}/approve`)).status).toBe(200);
      server.clock.advance(1);
    }
  };
  /** name → the routes a viewer's netmap carries for each peer (addresses left out). */
  const routesSeen = async (viewer: string) => {
    const view = (await netmap(server, d[viewer].nodeToken)).body;
    return Object.fromEntries(
      view.peers.map((p: any) => [p.name, p.allowedIPs.filter((ip: string) => !/^(100\.|fd7a:)/.test(ip))]),
    );
  };

  beforeAll(async () => {
    server = await startServer();
    await applyPolicy(server, POLICY);
    d = await enrollAll(server, {
      client: { tags: ['tag:client'] },
      'gw-a': { tags: ['tag:gw'], advertiseRoutes: ['10.5.1.0/24'] },
      'gw-b': { tags: ['tag:gw'], advertiseRoutes: ['10.5.1.0/24'] },
      db: { tags: ['tag:db'] },
      'src-a': { tags: ['tag:gw'], advertiseRoutes: ['10.7.0.0/24'] },
      'src-b': { tags: ['tag:gw'], advertiseRoutes: ['10.7.0.0/24'] },
    });
    await approveAll();
  });
  afterAll(() => server.close());

  it('makes the standby of a destination subnet a peer, without the prefix', async () => {
    expect(await routesSeen('client')).toEqual({ 'gw-a': ['10.5.1.0/24'], 'gw-b': [] });
    expect(await peerNames(server, d['gw-b'])).toEqual(['client']);
  });

  it('makes the standby of a source subnet a peer of the destination', async () => {
    expect(await peerNames(server, d.db)).toEqual(['src-a', 'src-b']);
    expect(await routesSeen('db')).toEqual({ 'src-a': ['10.7.0.0/24'], 'src-b': [] });
    expect(await peerNames(server, d['src-b'])).toEqual(['db']);
  });

  it('keeps the peer set when the primary fails; only the prefix moves', async () => {
    expect((await nodeCall(server, d['gw-a'].nodeToken, 'disconnect')).status).toBe(204);
    expect((await nodeCall(server, d['src-a'].nodeToken, 'disconnect')).status).toBe(204);
    expect(await routesSeen('client')).toEqual({ 'gw-a': [], 'gw-b': ['10.5.1.0/24'] });
    expect(await routesSeen('db')).toEqual({ 'src-a': [], 'src-b': ['10.7.0.0/24'] });
  });
});

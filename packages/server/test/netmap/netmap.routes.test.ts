/**
 * allowedIPs: a peer's own addresses, plus the approved, advertised routes it serves as
 * primary (the earliest approved whose device is online) that the viewer may use.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPolicy } from '../acl/helpers.js';
import { heartbeat, nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { type Devices, enrollAll, netmap } from './helpers.js';

const POLICY = `{
  "tagOwners": { "tag:gw": ["autogroup:admin"], "tag:client": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["tag:client"], "dst": ["10.5.0.0/16:*", "tag:gw:22"] },
  ],
}`;

describe('allowedIPs and primary routes', () => {
  let server: TestServer;
  let d: Devices;
  const routeId = async (device: string, prefix: string) => {
    const { routes } = await json(await server.call('GET', `/v1/routes?device=${device}`));
    return routes.find((r: any) => r.prefix === prefix).id as string;
  };
  const approve = async (device: string, prefix: string) => {
    const res = await server.call('POST', `/v1/routes/${await routeId(device, prefix)}/approve`);
    expect(res.status).toBe(200);
    // Approval order decides primary; keep the stamps apart.
    server.clock.advance(1);
  };
  /** The client's peers as name → routes in allowedIPs (addresses left out). */
  const routesSeen = async () => {
    const view = (await netmap(server, d.client.nodeToken)).body;
    return Object.fromEntries(
      view.peers.map((p: any) => [
        p.name,
        p.allowedIPs.filter((ip: string) => !ip.startsWith('100.') && !ip.startsWith('fd7a:')),
      ]),
    );
  };
  beforeAll(async () => {
    server = await startServer();
    await applyPolicy(server, POLICY);
    d = await enrollAll(server, {
      client: { tags: ['tag:client'] },
      'gw-a': { tags: ['tag:gw'], advertiseRoutes: ['10.5.1.0/24', '10.5.2.0/24', '192.168.1.0/24'] },
      'gw-b': { tags: ['tag:gw'], advertiseRoutes: ['10.5.1.0/24'] },
      'gw-c': { tags: ['tag:gw'], advertiseRoutes: ['10.5.3.0/24'] },
    });
  });
  afterAll(() => server.close());

  it('carries no pending route', async () => {
    expect(await routesSeen()).toEqual({ 'gw-a': [], 'gw-b': [], 'gw-c': [] });
  });

  it('carries an approved route through its primary only, and only routes the viewer may use', async () => {
    await approve('gw-a', '10.5.1.0/24');
    await approve('gw-b', '10.5.1.0/24');
    await approve('gw-a', '10.5.2.0/24');
    // 192.168.1.0/24 is approved but no rule lets the client use it.
    await approve('gw-a', '192.168.1.0/24');
    expect(await routesSeen()).toEqual({ 'gw-a': ['10.5.1.0/24', '10.5.2.0/24'], 'gw-b': [], 'gw-c': [] });
    const gwA = (await netmap(server, d.client.nodeToken)).body.peers.find((p: any) => p.name === 'gw-a');
    expect(gwA.allowedIPs).toEqual([
      `${d['gw-a'].device.addresses[0]}/32`,
      `${d['gw-a'].device.addresses[1]}/128`,
      '10.5.1.0/24',
      '10.5.2.0/24',
    ]);
  });

  it('moves a prefix to the next approved router when the primary goes offline, and back', async () => {
    const before = (await netmap(server, d.client.nodeToken)).body.version;
    expect((await nodeCall(server, d['gw-a'].nodeToken, 'disconnect')).status).toBe(204);
    expect(await routesSeen()).toEqual({ 'gw-a': [], 'gw-b': ['10.5.1.0/24'], 'gw-c': [] });
    const during = (await netmap(server, d.client.nodeToken)).body;
    expect(during.version).toBeGreaterThan(before);
    expect(during.peers.find((p: any) => p.name === 'gw-a').online).toBe(false);

    // Presence also times out: gw-b falls silent past 60 s while gw-a comes back.
    server.clock.advance(61_000);
    for (const name of ['client', 'gw-a', 'gw-c']) await heartbeat(server, d[name].nodeToken);
    expect(await routesSeen()).toEqual({ 'gw-a': ['10.5.1.0/24', '10.5.2.0/24'], 'gw-b': [], 'gw-c': [] });
    await heartbeat(server, d['gw-b'].nodeToken);
  });

  it('drops a route its router stops advertising, or an admin disables', async () => {
    await approve('gw-c', '10.5.3.0/24');
    expect((await routesSeen())['gw-c']).toEqual(['10.5.3.0/24']);
    await heartbeat(server, d['gw-c'].nodeToken, { advertiseRoutes: [] });
    expect((await routesSeen())['gw-c']).toEqual([]);
    await heartbeat(server, d['gw-c'].nodeToken, { advertiseRoutes: ['10.5.3.0/24'] });
    expect((await routesSeen())['gw-c']).toEqual(['10.5.3.0/24']);
    const res = await server.call('POST', `/v1/routes/${await routeId('gw-c', '10.5.3.0/24')}/disable`);
    expect(res.status).toBe(200);
    expect((await routesSeen())['gw-c']).toEqual([]);
  });

  it('takes a deleted router’s routes out of every netmap; the standby takes over', async () => {
    expect((await server.call('DELETE', `/v1/devices/${d['gw-a'].device.id}`)).status).toBe(204);
    expect(await routesSeen()).toEqual({ 'gw-b': ['10.5.1.0/24'], 'gw-c': [] });
  });
});

/**
 * A device that sees everyone gets its netmap fingerprint from per-class and per-network
 * digests instead of listing its peers. The shortcut must give exactly what listing gives, for
 * every device, with routes (an exit node's too) that make some views differ per viewer and
 * some peers offline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { networkView } from '../../src/modules/netmap/netmap.cache.js';
import { netmapHead, servedRoutes } from '../../src/modules/netmap/netmap.repository.js';
import { primariesOf } from '../../src/modules/netmap/netmap-primaries.js';
import { presenceSnapshot } from '../../src/modules/netmap/presence-snapshot.js';
import { applyPolicy } from '../acl/helpers.js';
import { nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { createUser, type Devices, enrollAll } from './helpers.js';

const POLICY = `{
  "tagOwners": { "tag:web": ["autogroup:admin"], "tag:gw": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },
    { "action": "accept", "src": ["ana@example.com"], "dst": ["tag:web:443"] },
    { "action": "accept", "src": ["tag:web"], "dst": ["10.0.0.0/24:*"] },
    { "action": "accept", "src": ["10.0.0.0/24"], "dst": ["tag:web:80"] },
  ],
}`;

describe('netmap fingerprints', () => {
  let server: TestServer;
  let d: Devices;
  beforeAll(async () => {
    server = await startServer();
    await createUser(server, 'ana@example.com');
    await applyPolicy(server, POLICY);
    d = await enrollAll(server, {
      'own-1': {},
      'own-2': {},
      'ana-1': { user: 'ana@example.com' },
      'ana-2': { user: 'ana@example.com' },
      web: { tags: ['tag:web'] },
      gw: { tags: ['tag:gw'], advertiseRoutes: ['10.0.0.0/24'] },
      // An exit node: its default routes show only to the devices that may use it (the admins').
      exit: { tags: ['tag:gw'], advertiseRoutes: ['0.0.0.0/0', '::/0'] },
    });
    for (const route of (await json(await server.call('GET', '/v1/routes'))).routes) {
      expect((await server.call('POST', `/v1/routes/${route.id}/approve`)).status).toBe(200);
    }
    expect((await nodeCall(server, d['ana-2'].nodeToken, 'disconnect')).status).toBe(204);
    // A device of the owner's enrolled a moment later is the last of the list: the cut must
    // also work there.
    server.clock.advance(1_000);
    Object.assign(d, await enrollAll(server, { 'own-3': {} }));
  });
  afterAll(() => server.close());

  /** The network's view, primaries and presence as a request would read them now. */
  const current = async () => {
    const db = server.database.storage.db;
    const now = server.clock.now();
    const head = (await netmapHead(db, server.networkId))!;
    return {
      view: await networkView(db, server.networkId, head),
      primaries: primariesOf(await servedRoutes(db, server.networkId, now)),
      presence: await presenceSnapshot(db, server.networkId, head, now),
    };
  };

  it('the shortcut for devices that see everyone equals listing their peers', async () => {
    const { view, primaries, presence } = await current();
    const map = view.peersFor(primaries);
    // The owner's devices (an admin's) see everyone; ana's and the tagged ones do not.
    expect(map.everyoneClassOf(d['own-1'].device.id)).toBeDefined();
    expect(map.everyoneClassOf(d['ana-1'].device.id)).toBeUndefined();
    expect(presence.online.has(d['ana-2'].device.id)).toBe(false);
    const exitAsAdminSees = map.peers(d['own-1'].device.id).find((p) => p.id === d.exit.device.id);
    expect(exitAsAdminSees?.allowedIPs).toEqual(expect.arrayContaining(['0.0.0.0/0', '::/0']));
    expect(map.peers(d['ana-1'].device.id).some((p) => p.id === d.exit.device.id)).toBe(false);

    const prints = new Set<string>();
    for (const [name, device] of Object.entries(d)) {
      const quick = view.fingerprint(primaries, device.device.id, presence);
      expect(quick, name).toBe(view.fingerprint(primaries, device.device.id, presence, 'list'));
      prints.add(quick);
    }
    // The two owner's devices see the same network less themselves: different prints.
    expect(prints.size).toBe(Object.keys(d).length);
  });

  it("cuts the peers of a device that sees everyone from its class's list, as listing them would", async () => {
    const { view, primaries, presence } = await current();
    const listed = (id: string) =>
      `[${view
        .peersFor(primaries)
        .peers(id)
        .map((peer) => view.peerJson(view.index.get(peer.id)!, peer, presence.online.has(peer.id)))
        .join(',')}]`;
    // Every position in the device order: the first, the middle and the last device.
    const sees = Object.values(d).filter((x) => view.peersFor(primaries).everyoneClassOf(x.device.id) !== undefined);
    expect(sees.length).toBeGreaterThanOrEqual(2);
    expect(view.index.get(d['own-3'].device.id)).toBe(view.size - 1);
    for (const device of sees) {
      const cut = view.everyonePeersJson(primaries, device.device.id, presence);
      expect(cut).toBe(listed(device.device.id));
      expect(JSON.parse(cut!).map((p: any) => p.name)).not.toContain(device.device.name);
    }
    expect(view.everyonePeersJson(primaries, d['ana-1'].device.id, presence)).toBeUndefined();
  });

  it('moves for a device that sees everyone when a peer goes offline, and only then', async () => {
    const print = async () => {
      const { view, primaries, presence } = await current();
      return view.fingerprint(primaries, d['own-1'].device.id, presence);
    };
    const before = await print();
    expect(await print()).toBe(before);
    expect((await nodeCall(server, d['ana-1'].nodeToken, 'disconnect')).status).toBe(204);
    expect(await print()).not.toBe(before);
  });
});

/**
 * `PrimaryRoutes` in a Tailscale client's map over real HTTP: the subnet routes a peer serves as
 * primary, never an exit node's default routes. Tailscale's client reads any route there as one
 * that `--accept-routes` would install (`NetworkMap.AnyPeersAdvertiseRoutes`), so an exit node
 * listed there made every peer without that flag warn "Some peers are advertising routes".
 */
import { describe, expect, it } from 'vitest';
import { applyPolicy } from '../../acl/helpers.js';
import { enrollAll } from '../../netmap/helpers.js';
import { protocolFixture } from './fixture.js';
import { type ControlClient, decodeMessages, mapRequest } from './ts-client.js';

const t = protocolFixture();

const POLICY = `{
  "tagOwners": { "tag:gw": ["autogroup:admin"], "tag:exit": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["10.7.0.0/16:*", "autogroup:internet:*"] },
  ],
  "autoApprovers": { "routes": { "10.7.0.0/16": ["tag:gw"] }, "exitNode": ["tag:exit"] },
}`;

interface MapNode {
  Name: string;
  AllowedIPs: string[];
  PrimaryRoutes?: string[];
  CapMap?: Record<string, unknown>;
}

async function fullMap(device: { client: ControlClient; nodeKey: string }) {
  const res = await device.client.post('/machine/map', mapRequest(device.nodeKey, false));
  expect(res.status).toBe(200);
  return decodeMessages(res.body)[0] as { Node: MapNode; Peers: MapNode[] };
}

describe('PrimaryRoutes in the map', () => {
  it('hold a subnet router’s primary routes, never an exit node’s default routes', async () => {
    await applyPolicy(t.server, POLICY);
    await enrollAll(t.server, {
      gw: { tags: ['tag:gw'], advertiseRoutes: ['10.7.1.0/24'] },
      exit: { tags: ['tag:exit'], advertiseRoutes: ['0.0.0.0/0', '::/0'] },
    });
    const laptop = await t.joined(await t.authKey(), 'laptop');
    const peers = Object.fromEntries((await fullMap(laptop)).Peers.map((p) => [p.Name.split('.')[0], p]));
    expect(peers.gw?.PrimaryRoutes).toEqual(['10.7.1.0/24']);
    // The exit node is on offer (its default routes are in AllowedIPs), and serves no subnet.
    expect(peers.exit?.AllowedIPs).toEqual(expect.arrayContaining(['0.0.0.0/0', '::/0']));
    expect(peers.exit?.PrimaryRoutes ?? []).toEqual([]);
    // Offered as a recommended exit node, which `tailscale exit-node suggest` and
    // `--exit-node=auto:any` pick among; a subnet router is not one.
    expect(peers.exit?.CapMap).toEqual({ 'suggest-exit-node': [] });
    expect(peers.gw?.CapMap).toBeUndefined();
  });
});

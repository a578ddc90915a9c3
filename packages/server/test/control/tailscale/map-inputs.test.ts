/**
 * A Tailscale map is built from the network view every stream of a change shares, without a
 * query or a native netmap of its own. What it is made of (peers, their presence and
 * allowedIPs, the device's own addresses and routes, the devices its packet filter is compiled
 * from) must be exactly what the device's native netmap says, for every device of a network
 * with users, groups, tags, autogroup:self, subnet routers (primary and standby, one offline)
 * and exit nodes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromNetmap, fromSharedView, type MapInputs } from '../../../src/control/tailscale/map-inputs.js';
import type { RoundOwner } from '../../../src/control/tailscale/map-round.js';
import { nodesByIds } from '../../../src/control/tailscale/tailscale.repository.js';
import { applyPolicy } from '../../acl/helpers.js';
import { heartbeat } from '../../devices/helpers.js';
import { json, startServer, type TestServer } from '../../harness.js';
import { createUser, type Devices, enrollAll } from '../../netmap/helpers.js';

const POLICY = `{
  "groups": { "group:eng": ["ana@example.com", "cy@example.com"] },
  "tagOwners": { "tag:gw": ["autogroup:admin"], "tag:exit": ["autogroup:admin"], "tag:web": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:web:80,443", "10.7.0.0/16:*"] },
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:22"] },
    { "action": "accept", "proto": "udp", "src": ["tag:web"], "dst": ["tag:gw:53"] },
    { "action": "accept", "src": ["ana@example.com"], "dst": ["autogroup:internet:*"] },
    { "action": "accept", "src": ["10.7.1.0/24"], "dst": ["bo@example.com:8080"] },
  ],
  "autoApprovers": {
    "routes": { "10.7.0.0/16": ["tag:gw"] },
    "exitNode": ["tag:exit"],
  },
}`;

/** What the two ways must agree on, arrays of routes sorted (their order carries no meaning). */
function summary(inputs: MapInputs) {
  return {
    peers: inputs.peers.map((p) => ({
      id: p.id,
      online: p.online,
      addresses: [...p.addresses],
      allowedIPs: [...p.allowedIPs],
    })),
    addresses: [...inputs.addresses],
    primaryRoutes: [...inputs.primaryRoutes].sort(),
    routes: [...inputs.routes].sort(),
    rows: [...inputs.rows.keys()].sort(),
    filter: inputs.filter.devices.map((d) => d.id),
  };
}

describe('a Tailscale map from the shared view', () => {
  let server: TestServer;
  let d: Devices;
  let control: RoundOwner;

  beforeAll(async () => {
    server = await startServer();
    control = { ctx: server.app.ctx, derpMap: () => ({}) };
    await applyPolicy(server, POLICY);
    for (const login of ['ana@example.com', 'bo@example.com', 'cy@example.com']) await createUser(server, login);
    d = await enrollAll(server, {
      'ana-laptop': { user: 'ana@example.com' },
      'ana-desktop': { user: 'ana@example.com' },
      'bo-laptop': { user: 'bo@example.com' },
      'cy-laptop': { user: 'cy@example.com' },
      web: { tags: ['tag:web'] },
      'gw-a': { tags: ['tag:gw'], advertiseRoutes: ['10.7.1.0/24', '10.7.2.0/24'] },
      'gw-b': { tags: ['tag:gw'], advertiseRoutes: ['10.7.1.0/24'] },
      exit: { tags: ['tag:exit'], advertiseRoutes: ['0.0.0.0/0', '::/0'] },
    });
  });
  afterAll(() => server.close());

  const compare = async () => {
    const { ctx } = control;
    for (const [name, device] of Object.entries(d)) {
      const [row] = await nodesByIds(ctx.db, server.networkId, [device.device.id]);
      const shared = await fromSharedView(control, row);
      expect(shared, name).toBeDefined();
      const native = await fromNetmap(control, row);
      expect(summary(shared!), name).toEqual(summary(native));
    }
  };

  it('gives what the native netmap gives, every router online', async () => {
    const { routes } = await json(await server.call('GET', '/v1/routes'));
    // The routers' routes were approved on enrolment (autoApprovers): the maps carry them.
    expect(routes.filter((r: any) => r.state === 'approved').length).toBe(5);
    await compare();
  });

  it('gives what the native netmap gives once a primary router went offline', async () => {
    // Everyone but gw-a heartbeats past the online window: gw-b takes over 10.7.1.0/24.
    server.clock.advance(45_000);
    for (const [name, device] of Object.entries(d)) {
      if (name !== 'gw-a') expect((await heartbeat(server, device.nodeToken)).status).toBe(200);
    }
    server.clock.advance(30_000);
    await compare();
    const [row] = await nodesByIds(control.ctx.db, server.networkId, [d['gw-b'].device.id]);
    expect((await fromSharedView(control, row))?.primaryRoutes).toEqual(['10.7.1.0/24']);
  });
});

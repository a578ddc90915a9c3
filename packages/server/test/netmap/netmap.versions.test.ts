/**
 * A device's netmap version changes when, and only when, its own view changes: each change
 * to the network below bumps exactly the devices whose self or peers it altered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPolicy } from '../acl/helpers.js';
import { heartbeat, nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { bumped, createUser, type Devices, enrollAll, netmap, versions } from './helpers.js';

const P1 = `{
  "groups": { "group:eng": ["ana@example.com"] },
  "tagOwners": { "tag:server": ["group:eng"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22"] },
  ],
}`;
// P1 without the engineers' rule; P3 adds bo's subnet.
const P2 = P1.replace(`    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22"] },\n`, '');
const P3 = P2.replace(
  '  ],\n}',
  `    { "action": "accept", "src": ["bo@example.com"], "dst": ["10.0.0.0/24:*"] },\n  ],\n}`,
);

describe('netmap versions', () => {
  let server: TestServer;
  let d: Devices;
  let last: Record<string, number>;
  /** Reads every version and returns the devices bumped since the previous read. */
  const changed = async () => {
    const now = await versions(server, d);
    const out = bumped(last, now);
    last = now;
    return out;
  };
  beforeAll(async () => {
    server = await startServer();
    await createUser(server, 'ana@example.com');
    await createUser(server, 'bo@example.com');
    await applyPolicy(server, P1);
    d = await enrollAll(server, {
      'ana-1': { user: 'ana@example.com' },
      'ana-2': { user: 'ana@example.com' },
      'bo-1': { user: 'bo@example.com' },
      'bo-2': { user: 'bo@example.com' },
      'bo-gw': { user: 'bo@example.com', advertiseRoutes: ['10.0.0.0/24'] },
      'own-1': {},
      srv: { tags: ['tag:server'] },
    });
    last = await versions(server, d);
  });
  afterAll(() => server.close());

  it('stays put while nothing changes, through reads, heartbeats and unrelated changes', async () => {
    expect(await changed()).toEqual([]);
    for (const device of Object.values(d)) await heartbeat(server, device.nodeToken);
    // A user without devices, and a key, change nobody's view.
    await createUser(server, 'cy@example.com');
    expect((await server.call('POST', '/v1/keys', { body: {} })).status).toBe(201);
    expect(await changed()).toEqual([]);
  });

  it('agrees with the heartbeat: its netmapVersion is the netmap version', async () => {
    for (const [name, device] of Object.entries(d)) {
      expect((await heartbeat(server, device.nodeToken)).body.netmapVersion, name).toBe(last[name]);
    }
  });

  it('a policy change bumps the devices whose peers it changed, and only those', async () => {
    await applyPolicy(server, P2);
    expect(await changed()).toEqual(['ana-1', 'ana-2', 'srv']);
    // The same policy again (a new version, the same views) bumps nobody.
    await applyPolicy(server, P2);
    expect(await changed()).toEqual([]);
  });

  it('a tag change bumps the device and those who now see it differently', async () => {
    // srv loses its tag: it becomes one of the owner's own devices.
    const res = await server.call('POST', `/v1/devices/${d.srv.device.id}/tags`, { body: { tags: [] } });
    expect(res.status).toBe(200);
    expect(await changed()).toEqual(['own-1', 'srv']);
  });

  it('a route approval bumps the router and the devices that route into it, not the rest', async () => {
    await applyPolicy(server, P3);
    // bo-1 and bo-2 may now send to 10.0.0.0/24, whose router is not approved yet: no new
    // peers for them (bo-gw is theirs already), so nobody's view changed.
    expect(await changed()).toEqual([]);
    const routes = (await json(await server.call('GET', '/v1/routes?device=bo-gw'))).routes;
    expect((await server.call('POST', `/v1/routes/${routes[0].id}/approve`)).status).toBe(200);
    expect(await changed()).toEqual(['bo-1', 'bo-2', 'bo-gw']);
    const view = (await netmap(server, d['bo-1'].nodeToken)).body;
    expect(view.peers.find((p: any) => p.name === 'bo-gw').allowedIPs).toContain('10.0.0.0/24');

    expect((await server.call('POST', `/v1/routes/${routes[0].id}/disable`)).status).toBe(200);
    expect(await changed()).toEqual(['bo-1', 'bo-2', 'bo-gw']);
  });

  it('a peer going offline bumps those who list it (online is in the view)', async () => {
    expect((await nodeCall(server, d['ana-2'].nodeToken, 'disconnect')).status).toBe(204);
    // ana-2 itself reads its netmap offline: its own online flag changed too.
    expect(await changed()).toEqual(['ana-1', 'ana-2']);
  });

  it('a role change bumps the devices autogroup:admin reaches', async () => {
    await applyPolicy(
      server,
      P3.replace(
        '  ],\n}',
        `    { "action": "accept", "src": ["autogroup:admin"], "dst": ["tag:server:*"] },\n  ],\n}`,
      ),
    );
    expect(await changed()).toEqual([]);
    const tagged = await server.call('POST', `/v1/devices/${d['bo-2'].device.id}/tags`, {
      body: { tags: ['tag:server'] },
    });
    expect(tagged.status).toBe(200);
    // bo-2 left bo's own devices and became a server the owner's devices (an admin's) reach.
    expect(await changed()).toEqual(['bo-1', 'bo-2', 'bo-gw', 'own-1', 'srv']);
    const ana = (await json(await server.call('GET', '/v1/users'))).users.find(
      (u: any) => u.loginName === 'ana@example.com',
    );
    expect((await server.call('PATCH', `/v1/users/${ana.id}`, { body: { role: 'admin' } })).status).toBe(200);
    expect(await changed()).toEqual(['ana-1', 'ana-2', 'bo-2']);
  });

  it('the heartbeat follows presence too: a peer coming back, then timing out', async () => {
    const beat = async (name: string) => (await heartbeat(server, d[name].nodeToken)).body.netmapVersion;
    const before = await beat('ana-1');
    // ana-2, disconnected above, comes back.
    await beat('ana-2');
    const back = await beat('ana-1');
    expect(back).toBe(before + 1);
    expect(await beat('ana-1')).toBe(back);
    // A minute of silence from everyone but ana-1: ana-2 timed out, which nobody wrote.
    server.clock.advance(60_000);
    expect(await beat('ana-1')).toBe(back + 1);
    expect((await netmap(server, d['ana-1'].nodeToken)).body.peers.find((p: any) => p.name === 'ana-2').online).toBe(
      false,
    );
  });
});

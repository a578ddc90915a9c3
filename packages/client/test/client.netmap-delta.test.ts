/**
 * NodeClient.followNetmap against a real server: it asks for a delta since the map held and
 * applies it, so the agent ends with the map a full fetch gives, having received one peer.
 */

import { type Enrolled, enroll, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyNetmapDelta, NodeClient } from '../src/index.js';
import { startWithClient } from './fixture.js';

const MESH = `{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:22"] }] }`;
const sortedPeers = (map: any) => [...map.peers].sort((a: any, b: any) => a.id.localeCompare(b.id));

describe('NodeClient delta netmaps', () => {
  let server: TestServer;
  let devices: Enrolled[];
  const node = (i: number) => new NodeClient({ url: server.url, nodeToken: devices[i]!.nodeToken });

  beforeAll(async () => {
    ({ server } = await startWithClient());
    const res = await server.call('PUT', '/v1/acl', { raw: MESH, headers: { 'content-type': 'application/hujson' } });
    expect(res.status).toBe(200);
    devices = await enroll(server, ['a', 'b', 'c', 'd']);
    for (let i = 0; i < devices.length; i++) await node(i).heartbeat();
  });
  afterAll(() => server.close());

  it('follows a change with a delta that, applied, equals the full map', async () => {
    const agent = node(0);
    const held = await agent.followNetmap(undefined);
    expect(held?.peers).toHaveLength(3);
    expect(await agent.followNetmap(held)).toBeUndefined();
    // A second device, read raw, shows what comes over the wire.
    const other = await node(1).netmap();

    await node(2).disconnect();
    const wire = await server.call('GET', '/v1/node/netmap?delta=true', {
      key: devices[1]!.nodeToken,
      headers: { 'if-none-match': `"${other!.version}"` },
    });
    const delta = (await wire.json()) as any;
    expect(delta.since).toBe(other!.version);
    expect(delta.peersChanged.map((p: any) => p.name)).toEqual(['c']);
    expect(delta.peers).toBeUndefined();

    const next = await agent.followNetmap(held);
    const full = await node(0).netmap();
    expect(next!.version).toBe(full!.version);
    expect(sortedPeers(next)).toEqual(sortedPeers(full));
    expect(next!.peers.find((p) => p.name === 'c')?.online).toBe(false);
  });

  it('refuses a delta for a version other than the one held', () => {
    const held = { self: {} as any, peers: [], version: 3 };
    expect(() =>
      applyNetmapDelta(held, { self: {} as any, version: 5, since: 4, peersChanged: [], peersRemoved: [] }),
    ).toThrow(/version 4/);
  });
});

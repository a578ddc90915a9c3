/**
 * What an open map stream keeps, for as long as its device is connected: digests of the map it
 * sent (not the map's texts), and nothing once it closes. With a fleet connected, whatever a
 * stream keeps is held once per device, so these hold the memory per connected device down.
 */
import { describe, expect, it } from 'vitest';
import { deltaResponse } from '../../../src/control/tailscale/map-delta.js';
import type { MapState } from '../../../src/control/tailscale/map-state.js';
import { openMapStreams } from '../../../src/control/tailscale/map-stream.js';
import { digestOf, sentMap } from '../../../src/control/tailscale/sent-map.js';
import { sentText } from '../../../src/control/tailscale/text-digest.js';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';

const text = (id: number, detail: string) => JSON.stringify({ ID: id, Name: `peer-${id}`, Detail: detail.repeat(400) });
const profile = (id: number, displayName: string) =>
  [
    id,
    {
      id,
      ...sentText(
        JSON.stringify({ ID: id, LoginName: 'ann@example.com', DisplayName: displayName, ProfilePicURL: '' }),
      ),
    },
  ] as const;
const peer = (id: number, detail: string) => {
  const t = text(id, detail);
  return [id, { text: t, digest: digestOf(t) }] as const;
};

function state(over: Partial<MapState> = {}): MapState {
  return {
    node: text(1, 'self'),
    peers: new Map([peer(2, 'a'), peer(3, 'b')]),
    peerIds: ['dev_2', 'dev_3'],
    packetFilter: JSON.stringify([
      { SrcIPs: ['100.64.0.2'], DstPorts: [{ IP: '*', Ports: { First: 0, Last: 65535 } }] },
    ]),
    sshPolicy: '{"rules":[]}',
    userProfiles: new Map([profile(7, 'Ann')]),
    dns: sentText(JSON.stringify({ Resolvers: [], Domains: ['example.internal'] })),
    derp: sentText(JSON.stringify({ Regions: { 900: { RegionID: 900, Nodes: [] } } })),
    domain: 'example.internal',
    flowLogDomain: '',
    shape: digestOf('shape'),
    loginExpiresAt: null,
    ...over,
  };
}

/** Every string reachable from `value`. */
function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value instanceof Map) return [...value.keys(), ...value.values()].flatMap(strings);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(strings);
  return [];
}

describe('what a map stream keeps of the map it sent', () => {
  it('keeps a digest of each text, not the text', () => {
    const sent = sentMap(state());
    // The domain and flow log id are kept as they are: short names, compared as such.
    const kept = strings({ ...sent, domain: undefined, flowLogDomain: undefined });
    // The node, filter, SSH policy, DNS config, DERP map, the map's shape, two peers and one profile.
    expect(kept.length).toBe(9);
    for (const s of kept) expect(s).toHaveLength(16);
    expect(sent.peers.size).toBe(2);
    expect(sent.userProfiles.get(7)).toHaveLength(16);
  });

  it('tells from the digests what changed, and writes the new texts', () => {
    const before = state();
    const sent = sentMap(before);
    const same = state();
    expect(deltaResponse(sent, sentMap(same), same, 2)).toBeUndefined();

    const after = state({
      peers: new Map([peer(2, 'a'), peer(4, 'c')]),
      packetFilter: '[]',
      userProfiles: new Map([profile(7, 'Ann B')]),
    });
    const delta = JSON.parse(deltaResponse(sent, sentMap(after), after, 2)!);
    expect(delta.Seq).toBe(2);
    expect(delta.PeersChanged).toEqual([JSON.parse(text(4, 'c'))]);
    expect(delta.PeersRemoved).toEqual([3]);
    expect(delta.PacketFilter).toEqual([]);
    expect(delta.UserProfiles).toEqual([
      { ID: 7, LoginName: 'ann@example.com', DisplayName: 'Ann B', ProfilePicURL: '' },
    ]);
    // With a profile, the Domain: tailscaled then rebuilds the netmap `tailscale status` reads.
    expect(delta.Domain).toBe(sentMap(after).domain);
    expect(delta.Node).toBeUndefined();
    expect(delta.DNSConfig).toBeUndefined();
    expect(delta.DERPMap).toBeUndefined();

    const moved = state({ node: text(1, 'moved'), derp: sentText('{"Regions":{}}') });
    const nodeDelta = JSON.parse(deltaResponse(sent, sentMap(moved), moved, 3)!);
    expect(nodeDelta.Node).toEqual(JSON.parse(text(1, 'moved')));
    expect(nodeDelta.DERPMap).toEqual({ Regions: {} });
    expect(nodeDelta.PeersChanged).toBeUndefined();
    // Without a new profile, no Domain: peers alone are applied in place.
    const peersOnly = state({ peers: new Map([peer(2, 'a'), peer(3, 'moved')]) });
    expect(JSON.parse(deltaResponse(sent, sentMap(peersOnly), peersOnly, 4)!).Domain).toBeUndefined();
  });
});

describe('a map stream that closes', () => {
  const t = protocolFixture();

  async function until(check: () => boolean): Promise<void> {
    for (const end = Date.now() + 10_000; !check(); ) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('leaves nothing of itself behind, closed by its client or with its channel', async () => {
    const key = await t.authKey();
    const base = openMapStreams.count;
    const alpha = await t.joined(key, 'alpha');
    const beta = await t.joined(key, 'beta');
    const body = (nodeKey: string) => ({
      Version: 142,
      NodeKey: nodeKey,
      Stream: true,
      Compress: 'zstd',
      Hostinfo: {},
    });
    const first = alpha.client.stream(body(alpha.nodeKey));
    const second = beta.client.stream(body(beta.nodeKey));
    await first.next(1);
    await second.next(1);
    await until(() => openMapStreams.count === base + 2);

    // The stream alone (the channel stays, as tailscaled's does between polls).
    first.close();
    await until(() => openMapStreams.count === base + 1);
    // The whole channel.
    beta.client.close();
    await until(() => openMapStreams.count === base);

    // Both devices went offline with their streams.
    const list = await json(await t.server.call('GET', '/v1/devices'));
    for (const device of list.devices) expect(device.online).toBe(false);
  });
});

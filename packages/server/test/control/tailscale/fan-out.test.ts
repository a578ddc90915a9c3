/**
 * One change, many map streams: the network-wide inputs of a packet filter (the policy's
 * users and the devices' identities) are read once per change in this process and shared by
 * every stream of the network, and each stream still receives its own correct map.
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundRowReads } from '../../../src/control/tailscale/map-round.js';
import { MAP_BUILD_CHANNEL } from '../../../src/control/tailscale/map-stream.js';
import { ChangeFeed, type NetworkChange } from '../../../src/modules/netmap/change-feed.js';
import { policyInputReads } from '../../../src/modules/netmap/policy-inputs.repository.js';
import { HUJSON } from '../../acl/helpers.js';
import { protocolFixture } from './fixture.js';
import { type ControlClient, nodeKey } from './ts-client.js';

const t = protocolFixture();

/** The open streams' map builds so far, as the server publishes them: the filter alone, or whole. */
const builds = { filterOnly: 0, whole: 0 };
const countBuild = (message: unknown) => {
  if ((message as { filterOnly: boolean }).filterOnly) builds.filterOnly++;
  else builds.whole++;
};
beforeAll(() => subscribe(MAP_BUILD_CHANNEL, countBuild));
afterAll(() => unsubscribe(MAP_BUILD_CHANNEL, countBuild));

// Each test connects several streams and waits for every rebuild to settle: seconds on an
// idle machine, many more on a loaded CI runner, so they get a minute rather than the default.

type Stream = ReturnType<ControlClient['stream']>;

/** Waits until no stream has received anything for a while: every rebuild has been sent. */
async function settled(streams: Stream[]): Promise<void> {
  let last = -1;
  for (;;) {
    const total = streams.reduce((sum, s) => sum + s.messages.length, 0);
    if (total === last) return;
    last = total;
    await new Promise((resolve) => setTimeout(resolve, 400));
  }
}

async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const reads = () => policyInputReads.users + policyInputReads.identities;

describe('a change fanned out to every map stream', () => {
  it('reads the policy inputs once per change, however many streams follow the network', async () => {
    const key = await t.authKey();
    const streams: Stream[] = [];
    const join = async (count: number) => {
      for (let i = 0; i < count; i++) {
        const { client, nodeKey } = await t.joined(key, `host-${streams.length}`);
        const stream = client.stream({ Version: 142, NodeKey: nodeKey, Stream: true, Compress: 'zstd', Hostinfo: {} });
        await stream.next(1);
        streams.push(stream);
      }
      await settled(streams);
    };
    /** Puts a policy allowing `port` and returns the reads it cost once every stream has it. */
    const change = async (port: number) => {
      const before = reads();
      const counts = streams.map((s) => s.messages.length);
      const res = await t.server.call('PUT', '/v1/acl', {
        headers: { 'content-type': HUJSON },
        raw: `{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:${port}"] }] }`,
      });
      expect(res.status, await res.text()).toBe(200);
      await Promise.all(streams.map((s, i) => s.next(counts[i] + 1)));
      await settled(streams);
      for (const s of streams) {
        const filters = s.messages.filter((m) => m.PacketFilter !== undefined);
        expect(filters.at(-1)?.PacketFilter).toEqual([
          { SrcIPs: ['*'], DstPorts: [{ IP: '*', Ports: { First: port, Last: port } }] },
        ]);
      }
      return reads() - before;
    };

    await join(2);
    const withTwo = await change(443);
    await join(4);
    const withSix = await change(8443);
    // Each stream read them itself before: six streams cost at least six reads of each.
    expect(withSix).toBe(withTwo);
    expect(withSix).toBeLessThanOrEqual(2);

    // Every stream still holds the whole network as peers, with correct deltas on top of its full map.
    for (const s of streams) {
      const peers = new Set<number>();
      for (const m of s.messages) {
        for (const p of (m.Peers ?? []) as Array<{ ID: number }>) peers.add(p.ID);
        for (const p of (m.PeersChanged ?? []) as Array<{ ID: number }>) peers.add(p.ID);
        for (const id of (m.PeersRemoved ?? []) as number[]) peers.delete(id);
      }
      expect(peers.size).toBe(streams.length - 1);
    }
  }, 60_000);

  it('shares nodes between streams without mixing identity classes: each gets its own peers and filter', async () => {
    const policy = (a: number, b: number) =>
      `{ "tagOwners": { "tag:a": ["autogroup:admin"], "tag:b": ["autogroup:admin"] },
         "acls": [{ "action": "accept", "src": ["tag:a"], "dst": ["tag:a:${a}"] },
                  { "action": "accept", "src": ["tag:b"], "dst": ["tag:b:${b}"] }] }`;
    const put = async (a: number, b: number) => {
      const res = await t.server.call('PUT', '/v1/acl', { headers: { 'content-type': HUJSON }, raw: policy(a, b) });
      expect(res.status, await res.text()).toBe(200);
    };
    await put(80, 81);
    const keys = { a: await t.authKey({ tags: ['tag:a'] }), b: await t.authKey({ tags: ['tag:b'] }) };
    const members: Array<{ cls: 'a' | 'b'; stream: Stream }> = [];
    for (const cls of ['a', 'b', 'a', 'b', 'a', 'b'] as const) {
      const { client, nodeKey } = await t.joined(keys[cls], `${cls}-${members.length}`);
      const stream = client.stream({ Version: 142, NodeKey: nodeKey, Stream: true, Compress: 'zstd', Hostinfo: {} });
      await stream.next(1);
      members.push({ cls, stream });
    }
    const streams = members.map((m) => m.stream);
    await settled(streams);
    const counts = streams.map((s) => s.messages.length);
    await put(1080, 1081);
    await Promise.all(streams.map((s, i) => s.next(counts[i] + 1)));
    await settled(streams);

    /** What a client holds after applying every message in order: its node, peers and filter. */
    const held = (s: Stream) => {
      const peers = new Map<number, Record<string, unknown>>();
      let node: Record<string, unknown> = {};
      let filter: unknown;
      for (const m of s.messages) {
        if (m.Node) node = m.Node as Record<string, unknown>;
        if (m.PacketFilter !== undefined) filter = m.PacketFilter;
        for (const p of [...((m.Peers ?? []) as object[]), ...((m.PeersChanged ?? []) as object[])]) {
          const peer = p as Record<string, unknown>;
          peers.set(peer.ID as number, peer);
        }
        for (const id of (m.PeersRemoved ?? []) as number[]) peers.delete(id);
      }
      return { node, peers, filter };
    };
    const states = members.map((m) => ({ cls: m.cls, ...held(m.stream) }));
    const address = (node: Record<string, unknown>) => (node.Addresses as string[])[0].replace(/\/32$/, '');
    for (const me of states) {
      const mates = states.filter((o) => o.cls === me.cls && o !== me);
      expect([...me.peers.keys()].sort()).toEqual(mates.map((o) => o.node.ID as number).sort());
      for (const peer of me.peers.values()) expect(peer.Tags).toEqual([`tag:${me.cls}`]);
      const port = me.cls === 'a' ? 1080 : 1081;
      const sources = states.filter((o) => o.cls === me.cls).map((o) => address(o.node));
      expect(me.filter).toEqual([
        {
          SrcIPs: expect.arrayContaining(sources),
          DstPorts: (me.node.Addresses as string[]).map((a) => ({
            IP: a.replace(/\/(32|128)$/, ''),
            Ports: { First: port, Last: port },
          })),
        },
      ]);
      // Only its own class's addresses (v4 and v6) are sources.
      const ownClass = states.filter((o) => o.cls === me.cls).flatMap((o) => o.node.Addresses as string[]);
      const srcs = (me.filter as Array<{ SrcIPs: string[] }>)[0].SrcIPs;
      for (const src of srcs) expect(ownClass.map((a) => a.replace(/\/(32|128)$/, ''))).toContain(src);
    }
  }, 60_000);

  it('sends a policy change that leaves who sees whom as the filter alone, and one that does not with the peers', async () => {
    const policy = (port: number, aReachesB: boolean) =>
      `{ "tagOwners": { "tag:a": ["autogroup:admin"], "tag:b": ["autogroup:admin"] },
         "acls": [{ "action": "accept", "src": ["tag:a"], "dst": ["tag:a:${port}"] },
                  { "action": "accept", "src": ["tag:b"], "dst": ["tag:b:${port}"] }
                  ${aReachesB ? ', { "action": "accept", "src": ["tag:a"], "dst": ["tag:b:22"] }' : ''}] }`;
    const put = async (port: number, aReachesB = false) => {
      const res = await t.server.call('PUT', '/v1/acl', {
        headers: { 'content-type': HUJSON },
        raw: policy(port, aReachesB),
      });
      expect(res.status, await res.text()).toBe(200);
    };
    await put(80);
    const keys = { a: await t.authKey({ tags: ['tag:a'] }), b: await t.authKey({ tags: ['tag:b'] }) };
    // Joined all at once: streams build while others join, hearing changes that do not concern them.
    const members = await Promise.all(
      (['a', 'b', 'a', 'b'] as const).map(async (cls, i) => {
        const { client, nodeKey } = await t.joined(keys[cls], `${cls}-${i}`);
        const stream = client.stream({ Version: 142, NodeKey: nodeKey, Stream: true, Compress: 'zstd', Hostinfo: {} });
        await stream.next(1);
        return { cls, stream, id: (stream.messages[0].Node as { ID: number }).ID };
      }),
    );
    const streams = members.map((m) => m.stream);
    await settled(streams);
    const after = async (change: () => Promise<void>) => {
      const counts = streams.map((s) => s.messages.length);
      await change();
      await Promise.all(streams.map((s, i) => s.next(counts[i] + 1)));
      await settled(streams);
      return streams.map((s, i) => s.messages.slice(counts[i]));
    };

    // The same peers, seen the same way: each stream is sent its new filter and nothing else,
    // and made nothing else (its node, its peers' nodes and profiles are as they were), nor
    // read any row to make it; the first policy change after the streams settled included
    // (nothing moved after each one's full map that it was not told of).
    for (const port of [81, 443]) {
      const filterOnly = builds.filterOnly;
      const rowsRead = roundRowReads.rows;
      for (const [i, sent] of (await after(() => put(port))).entries()) {
        expect(sent).toHaveLength(1);
        expect(Object.keys(sent[0]).sort()).toEqual(['PacketFilter', 'Seq']);
        const filter = sent[0].PacketFilter as Array<{ DstPorts: Array<{ Ports: { First: number } }> }>;
        expect(filter[0].DstPorts[0].Ports.First, `stream ${i}`).toBe(port);
      }
      expect(builds.filterOnly - filterOnly).toBe(streams.length);
      expect(roundRowReads.rows - rowsRead).toBe(0);
    }

    // Now a reaches b: each of a and b gains the other class as peers, with its filter, so
    // no stream can be sent its filter alone.
    const filterOnly = builds.filterOnly;
    const gained = await after(() => put(443, true));
    expect(builds.filterOnly - filterOnly).toBe(0);
    for (const [i, member] of members.entries()) {
      const others = members.filter((o) => o.cls !== member.cls).map((o) => o.id);
      const changed = gained[i].flatMap((m) => (m.PeersChanged ?? []) as Array<{ ID: number }>).map((p) => p.ID);
      expect(changed.sort(), `stream ${i}`).toEqual(others.sort());
    }
    const bFilter = gained[1].findLast((m) => m.PacketFilter !== undefined)?.PacketFilter as Array<{
      DstPorts: Array<{ Ports: { First: number } }>;
    }>;
    expect(bFilter.flatMap((r) => r.DstPorts.map((d) => d.Ports.First)).sort()).toEqual([22, 22, 443, 443]);

    // A device changed and a policy put right after it, taken into one build: its peers are
    // sent its new node, not the filter alone.
    const first = members[0].stream.messages[0].Node as { StableID: string; ID: number };
    const changes = await after(async () => {
      const patched = await t.server.call('PATCH', `/v1/devices/${first.StableID}`, {
        // Tagged, it never expired: now it does.
        body: { keyExpiryDisabled: false },
      });
      expect(patched.status, await patched.text()).toBe(200);
      await put(8443, true);
    });
    const seen = changes[2]
      .flatMap((m) => (m.PeersChanged ?? []) as Array<{ ID: number; KeyExpiry: string }>)
      .filter((p) => p.ID === first.ID);
    expect(Date.parse(seen.at(-1)?.KeyExpiry ?? '')).toBeGreaterThan(Date.now());
  }, 60_000);

  it('sends the filter alone when a new view lists the peers in another order than the patched one', async () => {
    // A view patched by enrollments appends each new device; one loaded anew (a new policy)
    // lists them by creation time. On PostgreSQL concurrent enrollments commit out of their
    // creation order, played here by each device being created a moment before the one
    // before it: the loaded view lists the group in the reverse of the patched one's order.
    // The peers are the same and seen the same way, so every stream is sent its filter alone.
    const put = async (port: number) => {
      const res = await t.server.call('PUT', '/v1/acl', {
        headers: { 'content-type': HUJSON },
        raw: `{ "tagOwners": { "tag:a": ["autogroup:admin"] },
                "acls": [{ "action": "accept", "src": ["tag:a"], "dst": ["tag:a:${port}"] }] }`,
      });
      expect(res.status, await res.text()).toBe(200);
    };
    await put(80);
    const key = await t.authKey({ tags: ['tag:a'] });
    const streams: Stream[] = [];
    for (let i = 0; i < 4; i++) {
      t.server.clock.advance(-1);
      const { client, nodeKey } = await t.joined(key, `a-${i}`);
      const stream = client.stream({ Version: 142, NodeKey: nodeKey, Stream: true, Compress: 'zstd', Hostinfo: {} });
      await stream.next(1);
      streams.push(stream);
      await settled(streams);
    }
    const counts = streams.map((s) => s.messages.length);
    const filterOnly = builds.filterOnly;
    const whole = builds.whole;
    await put(443);
    await Promise.all(streams.map((s, i) => s.next(counts[i] + 1)));
    await settled(streams);
    for (const [i, s] of streams.entries()) {
      const sent = s.messages.slice(counts[i]);
      expect(
        sent.map((m) => Object.keys(m).sort()),
        `stream ${i}`,
      ).toEqual([['PacketFilter', 'Seq']]);
      const filter = sent[0].PacketFilter as Array<{ SrcIPs: string[]; DstPorts: Array<{ Ports: { First: number } }> }>;
      expect(filter[0].DstPorts[0].Ports.First).toBe(443);
      expect(filter[0].SrcIPs).toHaveLength(8);
    }
    expect(builds.filterOnly - filterOnly).toBe(streams.length);
    expect(builds.whole - whole).toBe(0);
  }, 60_000);

  it('tells a device follow only of the changes about its device or the peers it holds', async () => {
    const res = await t.server.call('PUT', '/v1/acl', {
      headers: { 'content-type': HUJSON },
      raw: `{ "tagOwners": { "tag:a": ["autogroup:admin"], "tag:b": ["autogroup:admin"], "tag:c": ["autogroup:admin"] },
              "acls": [{ "action": "accept", "src": ["tag:a"], "dst": ["tag:a:*"] },
                       { "action": "accept", "src": ["tag:b"], "dst": ["tag:b:*"] }] }`,
    });
    expect(res.status, await res.text()).toBe(200);
    const keys = { a: await t.authKey({ tags: ['tag:a'] }), b: await t.authKey({ tags: ['tag:b'] }) };
    for (const [name, cls] of [
      ['a1', 'a'],
      ['a2', 'a'],
      ['b1', 'b'],
    ] as const)
      await t.joined(keys[cls], name);
    const [a1, a2, b1] = [await t.deviceId('a1'), await t.deviceId('a2'), await t.deviceId('b1')];

    const feed = new ChangeFeed(t.server.app.ctx);
    const heard = { a1: [] as NetworkChange[], b1: [] as NetworkChange[], plain: [] as NetworkChange[] };
    const follows = [
      feed.followDevice(t.server.networkId, a1, (c) => heard.a1.push(c)),
      feed.followDevice(t.server.networkId, b1, (c) => heard.b1.push(c)),
    ];
    const stopPlain = feed.follow(t.server.networkId, (c) => heard.plain.push(c));
    const retag = async (tag: string) => {
      const before = heard.plain.length;
      const r = await t.server.call('POST', `/v1/devices/${a2}/tags`, { body: { tags: [tag] } });
      expect(r.status, await r.text()).toBe(200);
      await until(() => heard.plain.length > before);
    };
    try {
      // Before they say what they hold, follows hear everything (the feed's first read names no device).
      await retag('tag:c');
      expect(heard.a1.length).toBe(1);
      expect(heard.b1.length).toBe(1);
      follows[0].watch([a2]);
      follows[1].watch([]);
      await retag('tag:a');
      const last = heard.plain.at(-1)!;
      expect(last.devices?.changed.has(a2)).toBe(true);
      expect(heard.a1.at(-1)).toBe(last);
      // b1 neither holds a2 nor is reached by it: not told.
      expect(heard.b1.length).toBe(1);
      // While broad (building a map), b1 is told of everything.
      follows[1].broad(true);
      await retag('tag:c');
      expect(heard.b1.at(-1)).toBe(heard.plain.at(-1));
      // a2 left a1's class, so a1 is not in its reach: told because it holds a2 as a peer.
      expect(heard.plain.at(-1)?.devices?.reach.has(a1)).toBe(false);
      expect(heard.a1.at(-1)).toBe(heard.plain.at(-1));
      follows[1].broad(false);
      const told = heard.b1.length;
      await retag('tag:b');
      // a2 now reaches b1 (tag:b sees tag:b): told as the change's reach, though it held no peer.
      expect(heard.b1.length).toBe(told + 1);
    } finally {
      for (const f of follows) f.stop();
      stopPlain();
      feed.close();
    }
  }, 60_000);

  it('cuts off a stream whose node key was rotated, from the rows its build shares', async () => {
    const key = await t.authKey();
    const alpha = await t.joined(key, 'alpha');
    const beta = await t.joined(key, 'beta');
    const stream = alpha.client.stream({
      Version: 142,
      NodeKey: alpha.nodeKey,
      Stream: true,
      Compress: 'zstd',
      Hostinfo: {},
    });
    await stream.next(1);
    const betaId = ((stream.messages[0].Peers ?? []) as Array<{ ID: number; Name: string }>).find((p) =>
      p.Name.startsWith('beta.'),
    )?.ID;
    expect(betaId).toBeDefined();
    // The same machine logs in with a new node key: the old key's stream loses its peers and ends.
    const rotated = await alpha.client.post('/machine/register', { NodeKey: nodeKey(), OldNodeKey: alpha.nodeKey });
    expect(rotated.status).toBe(200);
    await until(() => stream.messages.some((m) => Array.isArray(m.PacketFilter) && m.PacketFilter.length === 0));
    const last = stream.messages.at(-1)!;
    expect(last.PacketFilter).toEqual([]);
    expect(last.PeersRemoved).toContain(betaId);
    expect(beta.nodeKey).toBeDefined();
  }, 60_000);
  it('cuts off a device whose login expired by the clock rather than sending it a policy change’s filter', async () => {
    const policy = (port: number) =>
      `{ "acls": [{ "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:member:${port}"] }] }`;
    const put = async (port: number) => {
      const res = await t.server.call('PUT', '/v1/acl', { headers: { 'content-type': HUJSON }, raw: policy(port) });
      expect(res.status, await res.text()).toBe(200);
    };
    await put(80);
    const key = await t.authKey();
    const alpha = await t.joined(key, 'alpha');
    const open = (joined: typeof alpha) =>
      joined.client.stream({ Version: 142, NodeKey: joined.nodeKey, Stream: true, Compress: 'zstd', Hostinfo: {} });
    const alphaStream = open(alpha);
    await alphaStream.next(1);
    // Logins made from now on last half the online window (a minute).
    expect((await t.server.call('PATCH', '/v1/network', { body: { nodeKeyExpiry: '30s' } })).status).toBe(200);
    const beta = await t.joined(key, 'beta');
    const betaStream = open(beta);
    await betaStream.next(1);
    await settled([alphaStream, betaStream]);
    // A policy change while beta's login holds: the filter alone, to both.
    let counts = [alphaStream.messages.length, betaStream.messages.length];
    await put(443);
    await alphaStream.next(counts[0] + 1);
    await betaStream.next(counts[1] + 1);
    await settled([alphaStream, betaStream]);
    expect(Object.keys(betaStream.messages.at(-1)!).sort()).toEqual(['PacketFilter', 'Seq']);

    // Beta's login expires by the clock (no sweep has stored it, so no epoch moved: peers still
    // see it, both still online), and a policy change follows.
    t.server.clock.advance(31_000);
    counts = [alphaStream.messages.length, betaStream.messages.length];
    await put(8443);
    await betaStream.next(counts[1] + 1);
    await settled([alphaStream, betaStream]);
    const sent = betaStream.messages.slice(counts[1]);
    // Beta is told its key expired and loses its peers; its filter lets no peer in.
    const alphaNode = alphaStream.messages[0].Node as { ID: number; Addresses: string[] };
    const last = sent.at(-1)!;
    expect((last.Node as { Expired?: boolean } | undefined)?.Expired).toBe(true);
    expect(sent.flatMap((m) => (m.PeersRemoved ?? []) as number[])).toContain(alphaNode.ID);
    const sources = sent.flatMap((m) =>
      ((m.PacketFilter ?? []) as Array<{ SrcIPs: string[] }>).flatMap((r) => r.SrcIPs),
    );
    for (const address of alphaNode.Addresses) expect(sources).not.toContain(address.replace(/\/\d+$/, ''));
    // Alpha, whose login holds, gets the new filter (still with beta as a peer until the sweep).
    const alphaFilter = alphaStream.messages.slice(counts[0]).findLast((m) => m.PacketFilter !== undefined)
      ?.PacketFilter as Array<{
      DstPorts: Array<{ Ports: { First: number } }>;
    }>;
    expect(alphaFilter[0].DstPorts[0].Ports.First).toBe(8443);
  }, 60_000);

  it('cuts off a stream whose node key was rotated just before a policy change', async () => {
    const key = await t.authKey();
    const alpha = await t.joined(key, 'alpha');
    const beta = await t.joined(key, 'beta');
    const open = (joined: typeof alpha) =>
      joined.client.stream({ Version: 142, NodeKey: joined.nodeKey, Stream: true, Compress: 'zstd', Hostinfo: {} });
    const alphaStream = open(alpha);
    const betaStream = open(beta);
    await alphaStream.next(1);
    await betaStream.next(1);
    await settled([alphaStream, betaStream]);
    const rotated = await alpha.client.post('/machine/register', { NodeKey: nodeKey(), OldNodeKey: alpha.nodeKey });
    expect(rotated.status).toBe(200);
    const res = await t.server.call('PUT', '/v1/acl', {
      headers: { 'content-type': HUJSON },
      raw: '{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:8443"] }] }',
    });
    expect(res.status, await res.text()).toBe(200);
    // Whether the two changes are taken in one build or two, the old key's stream ends with no
    // peers and an empty filter, never with the new one.
    await until(() => alphaStream.messages.some((m) => Array.isArray(m.PacketFilter) && m.PacketFilter.length === 0));
    await settled([alphaStream]);
    expect(alphaStream.messages.at(-1)!.PacketFilter).toEqual([]);
  }, 60_000);
});

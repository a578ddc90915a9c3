/**
 * POST /machine/map: what the client reports (disco key, endpoints, home relay, Hostinfo and
 * the routes it advertises) is stored, then its map is answered: once (an update without a
 * stream), or as a long poll — the full map first, then a delta whenever the network's netmap
 * epoch, presence epoch or policy version moves and the device's map changed with it, and a
 * keep-alive when nothing was sent for a while. Those epochs live in the database, so a change
 * made through any instance reaches every stream. Each message is a 4-byte little-endian
 * length and a zstd frame of JSON. While the stream is open the device is online.
 */
import { channel } from 'node:diagnostics_channel';
import type { ServerHttp2Stream } from 'node:http2';
import { type Actor, systemActor } from '../../core/actor.js';
import { storeReport } from '../../modules/devices/device-reports.js';
import { disconnect, heartbeat } from '../../modules/devices/presence.service.js';
import { refreshPresence } from '../../modules/devices/presence-refresh.js';
import { followHostname } from '../../modules/devices/rename.service.js';
import { changeAt, type DeviceFollow, headKey, type NetworkChange } from '../../modules/netmap/change-feed.js';
import { type NetmapHead, netmapHead } from '../../modules/netmap/netmap.repository.js';
import { NO_SSH_RULES } from '../../policy/index.js';
import { buildLine } from './map-builds.js';
import { zstdCompress } from './map-compression.js';
import { deltaResponse, filterDelta, fullResponse, KEEP_ALIVE } from './map-delta.js';
import { advertisedRoutes, type MapRequest, reportOf } from './map-request.js';
import { type Control, type MapState, mapState, type NodeIdentity } from './map-state.js';
import { digestOf, type SentMap, sentMap } from './sent-map.js';
import { numericId } from './tailcfg.js';
import { type NodeRow, nodeByKey } from './tailscale.repository.js';

/** How often an open stream looks whether presence or a keep-alive is due (changes are pushed). */
const HOUSEKEEPING_MS = 5_000;
const KEEP_ALIVE_MS = 50_000;
/** Presence is refreshed well inside the online window (60 s), even one round late. */
const PRESENCE_MS = 20_000;

function frame(json: string): Buffer {
  const body = zstdCompress(Buffer.from(json));
  // One allocation, from the shared pool when small (most deltas): a 4-byte buffer of its own
  // for the length, then a concat, were two more per message of a fan-out.
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32LE(body.length, 0);
  body.copy(out, 4);
  return out;
}

/**
 * The numeric ids of the devices a change names, worked out once per change for every stream
 * that looks at it: a hash per device and stream would make each enrollment cost O(streams).
 */
const changedIds = new WeakMap<NetworkChange, number[]>();
function numericIdsOf(change: NetworkChange, changed: ReadonlySet<string>): number[] {
  let ids = changedIds.get(change);
  if (!ids) {
    ids = [...changed].map(numericId);
    changedIds.set(change, ids);
  }
  return ids;
}

/** Map streams of this process past their full map (for figures, and tests that none is left behind). */
export const openMapStreams = { count: 0 };

/**
 * Each build of an open stream is published here as `{ filterOnly, asked }` when something
 * subscribes (`asked`: the stream asked for the filter alone, only policies having moved since
 * its map, and got the whole map as the map's shape moved). A benchmark's probe preloaded into
 * the server (bench/soak-probe.mjs) counts them per change, and tests count them to show that
 * a policy change builds the filter alone; nothing subscribes in production.
 */
export const MAP_BUILD_CHANNEL = 'warren:tailscale:map-build';
const builds = channel(MAP_BUILD_CHANNEL);

function deviceActor(node: NodeRow): Actor {
  return { ...systemActor(node.network_id, node.name), type: 'device', id: node.id };
}

export async function serveMap(
  control: Control,
  machineKey: string,
  request: MapRequest,
  stream: ServerHttp2Stream,
  reply: (status: number, text: string) => void,
): Promise<void> {
  const { ctx } = control;
  const node = await nodeByKey(ctx.db, request.NodeKey, machineKey);
  if (!node) {
    reply(401, 'this node key is not registered with this machine key; log in again');
    return;
  }
  if (node.user_status === 'suspended') {
    reply(403, `the user of device ${node.id} is suspended`);
    return;
  }
  const actor = deviceActor(node);
  const hostname = node.hostname;
  await storeReport(ctx.db, node, reportOf(request));
  if (node.hostname !== hostname) await followHostname(ctx, actor, node.id, hostname);
  await heartbeat(ctx, actor, { advertiseRoutes: advertisedRoutes(request) });
  if (request.OmitPeers && !request.Stream) {
    reply(200, '');
    return;
  }
  stream.respond({ ':status': 200, 'content-type': 'application/octet-stream' });
  const head = headKey(await netmapHead(ctx.db, node.network_id));
  const first = await mapState(control, node);
  stream.write(frame(fullResponse(first, 1, new Date(ctx.clock.now()))));
  if (!request.Stream) {
    stream.end();
    return;
  }
  const identity = { id: node.id, network_id: node.network_id, node_key: node.node_key, machine_key: node.machine_key };
  const open = new OpenMapStream(control, stream, identity, actor, head, first);
  // What changed between the head read above and the follow is caught by reading it again.
  const now = await netmapHead(ctx.db, node.network_id);
  if (now) open.heardHead(now);
}

/**
 * A map stream after its full map, for as long as the device stays connected: one object per
 * device holding what the next delta needs (the digests of the map sent, the device's identity
 * and the head it is current at), and nothing of the request, the row or the first map's
 * texts. Its handlers are its methods, bound once.
 */
class OpenMapStream {
  private seq = 1;
  private sent: SentMap;
  private lastWrite = Date.now();
  private lastPresence = Date.now();
  /**
   * idle: the map sent is current as of `head`; waiting: a build is in line (buildLine) and will
   * read the network as it is when its turn comes; building: one runs now.
   */
  private state: 'idle' | 'waiting' | 'building' = 'idle';
  /** The newest change heard while waiting or building. */
  private latest: NetworkChange | undefined;
  /**
   * Whether a change this build takes in may have moved more than the policy
   * (NetworkChange.policyOnly). The first build after the full map is whole unless the change
   * feed's head was the full map's when following began, or the database's still was just
   * after: otherwise a policy change heard before the head after following began was read can
   * follow changes this stream was never told of.
   */
  private whole = true;
  private readonly follow: DeviceFollow;
  private readonly timer: NodeJS.Timeout;
  private readonly build = () => this.rebuild();
  private ended = false;

  constructor(
    private readonly control: Control,
    private readonly stream: ServerHttp2Stream,
    private readonly identity: NodeIdentity,
    private readonly actor: Actor,
    /** The netmap head the map sent is current as of. */
    private head: string,
    first: MapState,
  ) {
    this.sent = sentMap(first);
    openMapStreams.count++;
    this.follow = control.feed.followDevice(identity.network_id, identity.id, (change) => this.heard(change));
    // The feed will tell this stream of every change after its map's head: none lies unheard between.
    if (head !== '' && control.feed.headKeyOf(identity.network_id) === head) this.whole = false;
    this.follow.watch(first.peerIds);
    this.timer = setInterval(() => void this.housekeeping(), HOUSEKEEPING_MS);
    this.timer.unref();
    stream.once('close', () => this.closed());
    // Closed while its first map was being made: its 'close' has been or is being emitted.
    if (stream.destroyed) this.closed();
  }

  /** A head read outside the feed (the one after following began). */
  heardHead(head: NetmapHead): void {
    // Read before a change the feed has since told this stream of: taken in, it would replace
    // that newer change as the one the next build reads at, and the map would stay behind it.
    if (this.control.feed.precedesHeadOf(this.identity.network_id, head)) return;
    if (headKey(head) !== this.head) this.heard(changeAt(head));
    // Nothing moved from the map's head until after following began: the feed tells this
    // stream of every change from here, so a policy's own may send the filter alone.
    else if (this.state === 'idle') this.whole = false;
  }

  private heard(change: NetworkChange): void {
    if (this.state !== 'idle' && !change.policyOnly) this.whole = true;
    if (this.state === 'waiting') this.latest = change;
    // Judged once the running build has sent its map; two changes heard become one full look.
    else if (this.state === 'building') this.latest = this.latest ? changeAt(change.head) : change;
    else if (this.concerns(change)) this.schedule(change);
  }

  /** Whether this change can alter what this device was sent (see NetworkChange.devices). */
  private concerns(change: NetworkChange): boolean {
    if (change.key === this.head) return false;
    const devices = change.devices;
    if (!devices || devices.previousKey !== this.head || devices.reach.has(this.identity.id)) return true;
    for (const peer of numericIdsOf(change, devices.changed)) if (this.sent.peers.has(peer)) return true;
    // Only devices this one does not see, and that do not see it, changed: nothing to send,
    // and the map it holds is current.
    this.head = change.key;
    return false;
  }

  private schedule(change: NetworkChange): void {
    if (!change.policyOnly) this.whole = true;
    this.state = 'waiting';
    this.latest = change;
    buildLine(this.control).run(this.build);
  }

  private async rebuild(): Promise<void> {
    // Every change heard while waiting is in what this build reads: one delta for all of them.
    const change = this.latest!;
    this.latest = undefined;
    this.state = 'building';
    const { stream, follow } = this;
    if (stream.destroyed) {
      this.state = 'idle';
      return;
    }
    // Told of every change until the new map's peers are known.
    follow.broad(true);
    try {
      // Built after the change was read, so the map is at least as new as its head.
      this.head = change.key;
      // Only policies moved since the map sent was current (every change this stream was told
      // of in between was a policy's; the others it was not told of are not about its map).
      const policyOnly = !this.whole;
      this.whole = false;
      const next = policyOnly
        ? await mapState(this.control, this.identity, true, change.head, this.sent)
        : await mapState(this.control, this.identity, true, change.head);
      if (!next) return this.cutOff();
      let delta: string | undefined;
      if ('filterOnly' in next) {
        // The same peers, seen the same way: only the filter can have changed.
        if (builds.hasSubscribers) builds.publish({ filterOnly: true, asked: true });
        const filters = { packetFilter: digestOf(next.packetFilter), sshPolicy: digestOf(next.sshPolicy) };
        delta = filterDelta(this.sent, filters, next, this.seq + 1);
        // Changed in place rather than copied: every stream's record then keeps the one shape
        // sentMap gives it, and the code that reads it, optimised for that shape, is not thrown
        // away at the next policy change for meeting another.
        this.sent.packetFilter = filters.packetFilter;
        this.sent.sshPolicy = filters.sshPolicy;
      } else {
        if (builds.hasSubscribers) builds.publish({ filterOnly: false, asked: policyOnly });
        const nextSent = sentMap(next);
        delta = deltaResponse(this.sent, nextSent, next, this.seq + 1);
        this.sent = nextSent;
        follow.watch(next.peerIds);
      }
      if (delta && !stream.destroyed) {
        this.seq++;
        stream.write(frame(delta));
        this.lastWrite = Date.now();
      }
    } catch {
      // The device was deleted or re-enrolled meanwhile (its map cannot be built).
      this.cutOff();
    } finally {
      follow.broad(false);
      this.state = 'idle';
      const next = this.latest;
      this.latest = undefined;
      if (next && !stream.destroyed) {
        if (this.concerns(next)) this.schedule(next);
        // What was heard meanwhile (told of everything while building) left this map as it
        // is, which is now current as of its head: the next policy change may be the filter's.
        else this.whole = false;
      }
    }
  }

  /** A deleted device, or one whose user was suspended, loses its peers at once, then the stream. */
  private cutOff(): void {
    const { stream } = this;
    if (!stream.destroyed) {
      const removed = JSON.stringify([...this.sent.peers.keys()]);
      stream.write(
        frame(`{"Seq":${++this.seq},"PeersRemoved":${removed},"PacketFilter":[],"SSHPolicy":${NO_SSH_RULES}}`),
      );
    }
    this.stop();
    if (!stream.destroyed) stream.close();
  }

  private async housekeeping(): Promise<void> {
    const { stream } = this;
    if (stream.destroyed || this.state === 'building') return;
    try {
      // A stream cut off (deleted, suspended) stopped this timer: it is never marked online again.
      if (Date.now() - this.lastPresence >= PRESENCE_MS) {
        this.lastPresence = Date.now();
        await refreshPresence(this.control.ctx, this.actor.networkId, this.actor.id!);
      }
      if (Date.now() - this.lastWrite >= KEEP_ALIVE_MS && !stream.destroyed) {
        stream.write(frame(KEEP_ALIVE));
        this.lastWrite = Date.now();
      }
    } catch {
      // A failed heartbeat is retried on the next round; the stream itself is unaffected.
    }
  }

  private stop(): void {
    this.follow.stop();
    clearInterval(this.timer);
  }

  private closed(): void {
    if (this.ended) return;
    this.ended = true;
    openMapStreams.count--;
    this.stop();
    // The device is offline as soon as its stream is gone (it may have been deleted meanwhile).
    disconnect(this.control.ctx, this.actor).catch(() => {});
  }
}

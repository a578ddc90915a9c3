/**
 * POST /machine/map: what the client reports (disco key, endpoints, home relay, Hostinfo and
 * the routes it advertises) is stored, then its map is answered: once (an update without a
 * stream), or as a long poll — the full map first, then a delta whenever the network's netmap
 * epoch, presence epoch or policy version moves and the device's map changed with it, and a
 * keep-alive when nothing was sent for a while. Those epochs live in the database, so a change
 * made through any instance reaches every stream. Each message is a 4-byte little-endian
 * length and a zstd frame of JSON. While the stream is open the device is online.
 */
import type { ServerHttp2Stream } from 'node:http2';
import { type Actor, systemActor } from '../../core/actor.js';
import { storeReport } from '../../modules/devices/device-reports.js';
import { disconnect, heartbeat } from '../../modules/devices/presence.service.js';
import { changeAt, headKey, type NetworkChange } from '../../modules/netmap/change-feed.js';
import { netmapHead } from '../../modules/netmap/netmap.repository.js';
import { buildLine } from './map-builds.js';
import { zstdCompress } from './map-compression.js';
import { deltaResponse, fullResponse, KEEP_ALIVE } from './map-delta.js';
import { advertisedRoutes, type MapRequest, reportOf } from './map-request.js';
import { type Control, type MapState, mapState } from './map-state.js';
import { numericId } from './tailcfg.js';
import { type NodeRow, nodeByKey } from './tailscale.repository.js';

/** How often an open stream looks whether presence or a keep-alive is due (changes are pushed). */
const HOUSEKEEPING_MS = 5_000;
const KEEP_ALIVE_MS = 50_000;
/** Presence is refreshed well inside the online window (60 s), even one round late. */
const PRESENCE_MS = 20_000;

function frame(json: string): Buffer {
  const body = zstdCompress(Buffer.from(json));
  const size = Buffer.alloc(4);
  size.writeUInt32LE(body.length);
  return Buffer.concat([size, body]);
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
  await storeReport(ctx.db, node, reportOf(request));
  await heartbeat(ctx, actor, { advertiseRoutes: advertisedRoutes(request) });
  if (request.OmitPeers && !request.Stream) {
    reply(200, '');
    return;
  }
  stream.respond({ ':status': 200, 'content-type': 'application/octet-stream' });
  let seq = 1;
  let head = headKey(await netmapHead(ctx.db, node.network_id));
  let sent: MapState = await mapState(control, node);
  stream.write(frame(fullResponse(sent, seq, new Date(ctx.clock.now()))));
  if (!request.Stream) {
    stream.end();
    return;
  }

  let lastWrite = Date.now();
  let lastPresence = Date.now();
  /**
   * idle: the map sent is current as of `head`; waiting: a build is in line (buildLine) and will
   * read the network as it is when its turn comes; building: one runs now.
   */
  let state: 'idle' | 'waiting' | 'building' = 'idle';
  /** The newest change heard while waiting or building. */
  let latest: NetworkChange | undefined;
  const stop = () => {
    follow.stop();
    clearInterval(timer);
    if (!stream.destroyed) stream.close();
  };
  // A deleted device, or one whose user was suspended, loses its peers at once, then the stream.
  const cutOff = () => {
    if (!stream.destroyed)
      stream.write(
        frame(`{"Seq":${++seq},"PeersRemoved":${JSON.stringify([...sent.peers.keys()])},"PacketFilter":[]}`),
      );
    stop();
  };
  /** Whether this change can alter what this device was sent (see NetworkChange.devices). */
  const concerns = (change: NetworkChange) => {
    if (change.key === head) return false;
    const devices = change.devices;
    if (!devices || devices.previousKey !== head || devices.reach.has(node.id)) return true;
    for (const peer of numericIdsOf(change, devices.changed)) if (sent.peers.has(peer)) return true;
    // Only devices this one does not see, and that do not see it, changed: nothing to send,
    // and the map it holds is current.
    head = change.key;
    return false;
  };
  const line = buildLine(control);
  const schedule = (change: NetworkChange) => {
    state = 'waiting';
    latest = change;
    line.run(build);
  };
  const build = async () => {
    // Every change heard while waiting is in what this build reads: one delta for all of them.
    const change = latest!;
    latest = undefined;
    state = 'building';
    if (stream.destroyed) {
      state = 'idle';
      return;
    }
    // Told of every change until the new map's peers are known.
    follow.broad(true);
    try {
      // Built after the change was read, so the map is at least as new as its head.
      head = change.key;
      const next = await mapState(control, node, true);
      if (!next) return cutOff();
      const delta = deltaResponse(sent, next, seq + 1);
      sent = next;
      follow.watch(sent.peerIds);
      if (delta && !stream.destroyed) {
        seq++;
        stream.write(frame(delta));
        lastWrite = Date.now();
      }
    } catch {
      // The device was deleted or re-enrolled meanwhile (its map cannot be built).
      cutOff();
    } finally {
      follow.broad(false);
      state = 'idle';
      const next = latest;
      latest = undefined;
      if (next && !stream.destroyed && concerns(next)) schedule(next);
    }
  };
  const heard = (change: NetworkChange) => {
    if (state === 'waiting') latest = change;
    // Judged once the running build has sent its map; two changes heard become one full look.
    else if (state === 'building') latest = latest ? changeAt(change.head) : change;
    else if (concerns(change)) schedule(change);
  };
  const follow = control.feed.followDevice(node.network_id, node.id, heard);
  follow.watch(sent.peerIds);
  // What changed between the head read above and the follow is caught by reading it again.
  const now = await netmapHead(ctx.db, node.network_id);
  if (now && headKey(now) !== head) heard(changeAt(now));

  const housekeeping = async () => {
    if (stream.destroyed || state === 'building') return;
    try {
      // A stream cut off (deleted, suspended) stopped this timer: it is never marked online again.
      if (Date.now() - lastPresence >= PRESENCE_MS) {
        lastPresence = Date.now();
        await heartbeat(ctx, actor, {});
      }
      if (Date.now() - lastWrite >= KEEP_ALIVE_MS && !stream.destroyed) {
        stream.write(frame(KEEP_ALIVE));
        lastWrite = Date.now();
      }
    } catch {
      // A failed heartbeat is retried on the next round; the stream itself is unaffected.
    }
  };
  const timer = setInterval(() => void housekeeping(), HOUSEKEEPING_MS);
  timer.unref();
  stream.on('close', () => {
    follow.stop();
    clearInterval(timer);
    // The device is offline as soon as its stream is gone (it may have been deleted meanwhile).
    disconnect(ctx, actor).catch(() => {});
  });
}

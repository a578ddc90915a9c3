/**
 * Delta netmaps (`GET /v1/node/netmap?delta=true`): the server answers a conditional fetch
 * with only the peers changed or removed since the version the agent holds, when it still
 * knows that version, and with the full map otherwise. `applyNetmapDelta` turns the map held
 * plus a delta into the current map; peers keep their place, new ones are appended (the order
 * of peers carries no meaning).
 */
import type { DeviceBody, NetmapBody, PeerBody } from '@warren/contract';

export interface NetmapDeltaBody {
  self: DeviceBody;
  version: number;
  /** The version the delta applies to. */
  since: number;
  /** Peers that are new or differ from the held ones, whole. */
  peersChanged: PeerBody[];
  /** Ids of peers that are no longer peers. */
  peersRemoved: string[];
}

export function isNetmapDelta(body: NetmapBody | NetmapDeltaBody): body is NetmapDeltaBody {
  return 'since' in body;
}

/** The map `delta` leads to from `held`; throws when the delta is for another version. */
export function applyNetmapDelta(held: NetmapBody, delta: NetmapDeltaBody): NetmapBody {
  if (held.version !== delta.since) {
    throw new Error(`netmap delta is for version ${delta.since}, but version ${held.version} is held`);
  }
  const removed = new Set(delta.peersRemoved);
  const changed = new Map(delta.peersChanged.map((peer) => [peer.id, peer]));
  const peers: PeerBody[] = [];
  for (const peer of held.peers) {
    if (removed.has(peer.id)) continue;
    const next = changed.get(peer.id);
    peers.push(next ?? peer);
    changed.delete(peer.id);
  }
  for (const peer of changed.values()) peers.push(peer);
  return { self: delta.self, peers, version: delta.version };
}

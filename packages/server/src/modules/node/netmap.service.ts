/**
 * A device's netmap: itself (its detail record) and the peers the policy lets it reach or be
 * reached by, each with the addresses and the primary routes to put in allowedIPs.
 *
 * Versions. A device's `netmapVersion` changes when, and only when, its view changes: the view
 * (self without the volatile lastSeen, and every peer with its online flag) is hashed, and the
 * hash is compared with the one stored on the device; a different hash bumps the version
 * (a compare-and-set, so concurrent requests computing the same view bump it once). This runs
 * lazily, on each netmap request and each heartbeat, so the heartbeat's version tells an agent
 * when to fetch. A change to the network bumps only the devices whose view it changed.
 *
 * Cost: the peer map is cached per process and network (see netmap.cache.ts); a request costs a
 * few indexed queries plus O(its peers).
 */
import { createHash } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { Db } from '../../storage/database.js';
import { presentDeviceDetail } from '../devices/devices.presenter.js';
import { routesOfDevice } from '../devices/devices.repository.js';
import { choosePrimaries, networkView } from './netmap.cache.js';
import { netmapHead, onlineAmong, onlineDevices, selfRow, servedRoutes, settleVersion } from './netmap.repository.js';
import { deviceGone } from './presence.service.js';

export interface Netmap {
  version: number;
  /** The JSON response body `{ self, peers, version }`, serialized once. */
  body: string;
}

export async function deviceNetmap(ctx: AppContext, networkId: string, deviceId: string): Promise<Netmap> {
  const db = ctx.db;
  const now = ctx.clock.now();
  const [head, served, self, selfRoutes] = await Promise.all([
    netmapHead(db, networkId),
    servedRoutes(db, networkId),
    selfRow(db, networkId, deviceId),
    routesOfDevice(db, networkId, now, deviceId),
  ]);
  if (!self || !head) throw deviceGone();

  let view = await networkView(db, networkId, head);
  // A device always enrolls with an epoch bump, so it is in any view read after it could
  // authenticate; reload once in case it raced a deletion and re-creation.
  if (!view.index.has(deviceId)) view = await networkView(db, networkId, head, true);
  const peers = view.peersFor(choosePrimaries(served, now)).peers(deviceId);

  const online = await peersOnline(db, networkId, peers, view.size, now);
  const parts: string[] = new Array(peers.length);
  for (let k = 0; k < peers.length; k++) {
    const peer = peers[k];
    parts[k] = view.peerJson(view.index.get(peer.id)!, peer, online.has(peer.id));
  }
  const peersJson = `[${parts.join(',')}]`;
  const selfBody = presentDeviceDetail(self, now, selfRoutes);
  const selfJson = JSON.stringify(selfBody);

  // lastSeen moves with every heartbeat; it is not part of what the device needs to re-fetch.
  const hash = createHash('sha256')
    .update(JSON.stringify({ ...selfBody, lastSeen: null }))
    .update('\n')
    .update(peersJson)
    .digest('hex')
    .slice(0, 32);
  const version = await settleVersion(db, deviceId, self, hash);
  if (version === undefined) throw deviceGone();
  return { version, body: `{"self":${selfJson},"peers":${peersJson},"version":${version}}` };
}

/** Presence of the peers: by id for a short list, from the network's online set for a long one. */
function peersOnline(
  db: Db,
  networkId: string,
  peers: readonly { id: string }[],
  networkSize: number,
  now: number,
): Promise<Set<string>> {
  if (peers.length === 0) return Promise.resolve(new Set());
  if (peers.length * 4 >= networkSize) return onlineDevices(db, networkId, now);
  return onlineAmong(
    db,
    peers.map((p) => p.id),
    now,
  );
}

/** `If-None-Match` holds this version: quoted or bare, possibly weak, possibly in a list, or `*`. */
export function versionMatches(header: string | undefined, version: number): boolean {
  if (!header) return false;
  const wanted = String(version);
  return header.split(',').some((raw) => {
    const tag = raw.trim().replace(/^W\//, '');
    return tag === '*' || tag === wanted || tag === `"${wanted}"`;
  });
}

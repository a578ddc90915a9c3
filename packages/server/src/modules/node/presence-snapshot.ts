/**
 * Which devices of a network are online, read once and shared by every netmap and heartbeat
 * of that network on this instance, with a digest that names the set.
 *
 * Why: a peer's `online` flag is part of every netmap that lists it, so a device's netmap
 * version depends on its peers' presence. Reading that presence per request is O(peers); in a
 * full mesh of 10,000 devices heartbeating every 15–20 s it would be most of the server's work.
 * With a shared snapshot a heartbeat compares digests instead (see netmap.service.ts).
 *
 * The snapshot is exact, not merely recent. Presence changes in two ways, and each one retires
 * it: a call that takes a device online (an enrollment, a heartbeat after silence) or offline (a
 * disconnect) moves the network's presence epoch, on any instance; and a device timing out needs
 * no call, so the snapshot expires when the first of its devices would time out. A deleted
 * device may linger in the set until then, which is harmless: it is in no view any more.
 * Other changes (policy, tags, routes) leave presence alone and keep the snapshot.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../../storage/database.js';
import { ONLINE_WINDOW_MS } from '../devices/presence.js';
import { type NetmapHead, onlineDevices } from './netmap.repository.js';

export interface PresenceSnapshot {
  online: ReadonlySet<string>;
  /** Names the set: equal digests, equal sets. */
  digest: string;
}

interface Entry {
  presenceEpoch: number;
  takenAt: number;
  /** The first moment a device in the set would time out. */
  validUntil: number;
  snapshot: Promise<PresenceSnapshot>;
}

/** Networks whose snapshot is kept; the least recently used is dropped past this. */
const MAX_NETWORKS = 256;
const snapshots = new Map<string, Entry>();

export function presenceSnapshot(db: Db, networkId: string, head: NetmapHead, now: number): Promise<PresenceSnapshot> {
  const hit = snapshots.get(networkId);
  snapshots.delete(networkId);
  if (hit && hit.presenceEpoch === head.presenceEpoch && now >= hit.takenAt && now < hit.validUntil) {
    snapshots.set(networkId, hit);
    return hit.snapshot;
  }
  // Until the query answers, nothing is known to time out: concurrent callers share the read.
  const entry: Entry = {
    presenceEpoch: head.presenceEpoch,
    takenAt: now,
    validUntil: Number.POSITIVE_INFINITY,
    snapshot: Promise.resolve({ online: new Set(), digest: '' }),
  };
  entry.snapshot = onlineDevices(db, networkId, now).then(({ ids, oldestSeen }) => {
    entry.validUntil = oldestSeen === null ? Number.POSITIVE_INFINITY : oldestSeen + ONLINE_WINDOW_MS;
    const digest = createHash('sha256').update(ids.sort().join(',')).digest('hex').slice(0, 32);
    return { online: new Set(ids), digest };
  });
  entry.snapshot.catch(() => {
    if (snapshots.get(networkId) === entry) snapshots.delete(networkId);
  });
  snapshots.set(networkId, entry);
  if (snapshots.size > MAX_NETWORKS) snapshots.delete(snapshots.keys().next().value as string);
  return entry.snapshot;
}

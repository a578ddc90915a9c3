/**
 * Which devices of a network are online, read once and shared by every netmap and heartbeat
 * of that network on this instance, with a digest that names the set.
 *
 * Why: a peer's `online` flag is part of every netmap that lists it, so a device's netmap
 * version depends on its peers' presence. Reading that presence per request is O(peers); in a
 * full mesh of 10,000 devices heartbeating every 15–20 s it would be most of the server's work.
 * With a shared snapshot a heartbeat compares digests instead (see netmap.service.ts).
 *
 * The snapshot is exact, not merely recent. Presence changes in two ways: a call that takes a
 * device online (an enrollment, a heartbeat after silence) or offline (a disconnect) moves the
 * network's presence epoch, on any instance, and the set is read again; a device timing out
 * needs no call, so the snapshot holds until the first of its devices would time out by the
 * heartbeats it was read with. Then only those devices are read again (most have heartbeated
 * since): a fleet whose devices time out one by one costs a few rows per snapshot, not the
 * whole network each time. A deleted device may linger in the set until then, which is
 * harmless: it is in no view any more. Other changes (policy, tags, routes) leave presence
 * alone and keep the snapshot.
 *
 * The digest is the XOR of a hash per member (set-digest.ts), so it follows the set by the
 * members that came or went.
 */

import { MinHeap } from '../../lib/min-heap.js';
import type { Db } from '../../storage/database.js';
import { ONLINE_WINDOW_MS } from '../devices/presence.js';
import { type NetmapHead, onlineAmong, onlineDevices } from './netmap.repository.js';
import { OnlineSet } from './online-set.js';
import { DIGEST_WORDS, hashInto, SetDigest } from './set-digest.js';

export interface PresenceSnapshot {
  readonly online: OnlineSet;
  /** Names the set: equal digests, equal sets. */
  readonly digest: string;
  /**
   * When the snapshot was made from the previous one by removing the devices that timed out:
   * that snapshot and those devices, so whatever was derived from it can follow by difference
   * (NetworkView's online digest). Only one step is kept: it is cleared when the next is made,
   * so snapshots do not chain back through the whole run.
   */
  madeFrom?: { snapshot: PresenceSnapshot; left: readonly string[] };
}

/** What a snapshot was made from, kept so the next one can be made by difference. */
interface Taken {
  snapshot: PresenceSnapshot;
  /** Each online device's last heartbeat as read, the oldest first: who may time out next. */
  due: MinHeap<Seen>;
  /** Each member's hash, and their XOR. */
  hashes: Map<string, Uint32Array>;
  digest: SetDigest;
  /** The first moment a device in the set would time out, by the heartbeats read. */
  validUntil: number;
}

interface Entry {
  presenceEpoch: number;
  takenAt: number;
  validUntil: number;
  taken: Promise<Taken>;
}

/** Networks whose snapshot is kept; the least recently used is dropped past this. */
const MAX_NETWORKS = 256;
const snapshots = new Map<string, Entry>();

export function presenceSnapshot(db: Db, networkId: string, head: NetmapHead, now: number): Promise<PresenceSnapshot> {
  const hit = snapshots.get(networkId);
  snapshots.delete(networkId);
  const sameEpoch = hit !== undefined && hit.presenceEpoch === head.presenceEpoch && now >= hit.takenAt;
  if (sameEpoch && now < hit.validUntil) {
    snapshots.set(networkId, hit);
    return hit.taken.then((taken) => taken.snapshot);
  }
  // Until the read answers, nothing is known to time out: concurrent callers share it.
  const entry: Entry = {
    presenceEpoch: head.presenceEpoch,
    takenAt: now,
    validUntil: Number.POSITIVE_INFINITY,
    taken: (async () => {
      const before = await hit?.taken.catch(() => undefined);
      if (before && sameEpoch) return expire(db, networkId, before, now);
      return take(db, networkId, now, before?.hashes);
    })(),
  };
  entry.taken.then(
    (taken) => {
      entry.validUntil = taken.validUntil;
    },
    () => {
      if (snapshots.get(networkId) === entry) snapshots.delete(networkId);
    },
  );
  snapshots.set(networkId, entry);
  if (snapshots.size > MAX_NETWORKS) snapshots.delete(snapshots.keys().next().value as string);
  return entry.taken.then((taken) => taken.snapshot);
}

interface Seen {
  id: string;
  at: number;
}
const atOf = (seen: Seen) => seen.at;

/** The whole online set, read again; members already hashed keep their hash. */
async function take(db: Db, networkId: string, now: number, known?: Map<string, Uint32Array>): Promise<Taken> {
  const seen = await onlineDevices(db, networkId, now);
  const hashes = new Map<string, Uint32Array>();
  const digest = new SetDigest();
  for (const id of seen.keys()) {
    const hash = known?.get(id) ?? hashOf(id);
    hashes.set(id, hash);
    digest.toggle(hash, 0);
  }
  const due = new MinHeap(
    atOf,
    Array.from(seen, ([id, at]) => ({ id, at })),
  );
  return made(due, hashes, digest, { online: OnlineSet.of(seen.keys()) });
}

/**
 * The set once its first devices would have timed out: only those are read again (taken off
 * the top of the heap, so the cost follows them, not the network); the ones that heartbeated
 * since go back with their new heartbeat, the others leave. The replaced snapshot's heap and
 * maps are taken over (nothing reads them after this), its set is not.
 */
async function expire(db: Db, networkId: string, before: Taken, now: number): Promise<Taken> {
  const cutoff = now - ONLINE_WINDOW_MS;
  const { due, hashes, digest } = before;
  const stale: string[] = [];
  while ((due.peek()?.at ?? Number.POSITIVE_INFINITY) <= cutoff) stale.push(due.pop()!.id);
  const still = await onlineAmong(db, networkId, stale, now);
  const left: string[] = [];
  for (const id of stale) {
    const at = still.get(id);
    if (at !== undefined) {
      due.push({ id, at });
      continue;
    }
    left.push(id);
    digest.toggle(hashes.get(id)!, 0);
    hashes.delete(id);
  }
  const previous = before.snapshot;
  previous.madeFrom = undefined;
  return made(due, hashes, digest, {
    online: previous.online.without(left),
    madeFrom: { snapshot: previous, left },
  });
}

function made(
  due: MinHeap<Seen>,
  hashes: Map<string, Uint32Array>,
  digest: SetDigest,
  set: Pick<PresenceSnapshot, 'online' | 'madeFrom'>,
): Taken {
  return {
    snapshot: { ...set, digest: `${digest.hex()}.${hashes.size}` },
    due,
    hashes,
    digest,
    validUntil: (due.peek()?.at ?? Number.POSITIVE_INFINITY) + ONLINE_WINDOW_MS,
  };
}

function hashOf(id: string): Uint32Array {
  const hash = new Uint32Array(DIGEST_WORDS);
  hashInto(id, hash, 0);
  return hash;
}

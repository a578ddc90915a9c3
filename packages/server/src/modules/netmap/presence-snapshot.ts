/**
 * Which devices of a network are online, read once and shared by every netmap and heartbeat
 * of that network on this instance, with a digest that names the set.
 *
 * Why: a peer's `online` flag is part of every netmap that lists it, so a device's netmap
 * version depends on its peers' presence. Reading that presence per request is O(peers); in a
 * full mesh of 10,000 devices heartbeating every 15–20 s it would be most of the server's work.
 * With a shared snapshot a heartbeat compares digests instead (see netmap.service.ts).
 *
 * The snapshot is exact, not merely recent. Presence changes in two ways, and a snapshot
 * follows each by reading again only the devices concerned, not the whole network:
 * - A call takes a device online (an enrollment, a heartbeat after silence) or offline (a
 *   disconnect), on any instance: the network's presence epoch moves, and the device is logged
 *   against the new epoch (presence-changes.ts). A snapshot of an older epoch reads the logged
 *   devices again; when the log does not cover every epoch in between (pruned, or a move that
 *   does not log, such as a user's suspension), it reads the whole set.
 * - A device times out, which needs no call: the snapshot holds until the first of its devices
 *   would time out by the heartbeats it was read with. Those devices come off the top of a
 *   min-heap and are read again (most have heartbeated since).
 * A deleted device may linger in the set until it would time out, which is harmless: it is in
 * no view any more. Other changes (policy, tags, routes) leave presence alone.
 *
 * The digest is the XOR of a hash per member (set-digest.ts), and the online set an immutable
 * set derived by difference (online-set.ts), so both follow the set by the members that came
 * or went.
 */
import { MinHeap } from '../../lib/min-heap.js';
import type { Db } from '../../storage/database.js';
import { onlineSince, onlineUntil } from '../network/online.js';
import { presenceChangedSince } from '../network/presence-changes.js';
import { type NetmapHead, onlineAmong, onlineDevices } from './netmap.repository.js';
import { OnlineSet } from './online-set.js';
import { DIGEST_WORDS, hashInto, SetDigest } from './set-digest.js';

export interface PresenceSnapshot {
  readonly online: OnlineSet;
  /** Names the set: equal digests, equal sets. */
  readonly digest: string;
  /**
   * When the snapshot was made from the previous one by difference: that snapshot and the
   * devices that left and joined, so whatever was derived from it can follow by difference
   * (NetworkView's online digest). Only one step is kept: it is cleared when the next is made,
   * so snapshots do not chain back through the whole run.
   */
  madeFrom?: { snapshot: PresenceSnapshot; left: readonly string[]; joined: readonly string[] };
}

interface Seen {
  id: string;
  at: number;
}

/** What a snapshot was made from, kept so the next one can be made by difference. */
interface Taken {
  snapshot: PresenceSnapshot;
  /** Each online device's last heartbeat, as read. */
  seen: Map<string, number>;
  /**
   * The same heartbeats, the oldest first: who may time out next. An entry whose time is no
   * longer its device's in `seen` (read again since, or gone) is stale and skipped.
   */
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
  // A call that read its head or its clock before the held snapshot was made (concurrent calls
  // finish in any order) is answered from that snapshot or a later one: a state after the call
  // began, never one before. Taken back to the call's own head instead, the snapshot had to be
  // read whole, and under load most calls arrived so.
  const epoch = Math.max(head.presenceEpoch, hit?.presenceEpoch ?? 0);
  const at = Math.max(now, hit?.takenAt ?? 0);
  if (hit && hit.presenceEpoch === epoch && at < hit.validUntil) {
    snapshots.set(networkId, hit);
    return hit.taken.then((taken) => taken.snapshot);
  }
  // Until the read answers, nothing is known to time out: concurrent callers share it.
  const entry: Entry = {
    presenceEpoch: epoch,
    takenAt: at,
    validUntil: Number.POSITIVE_INFINITY,
    taken: (async () => {
      const before = await hit?.taken.catch(() => undefined);
      if (before && hit) {
        const moved = await presenceChangedSince(db, networkId, hit.presenceEpoch, epoch);
        if (moved) return advance(db, networkId, before, moved, at);
      }
      return take(db, networkId, at, before?.hashes);
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

const atOf = (seen: Seen) => seen.at;

/** The online set read whole, past every snapshot held: what a snapshot must always equal. */
export async function wholePresence(db: Db, networkId: string, now: number): Promise<PresenceSnapshot> {
  return (await take(db, networkId, now)).snapshot;
}

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
  return made(seen, due, hashes, digest, { online: OnlineSet.of(seen.keys()) });
}

/**
 * The set after the logged devices `moved` changed presence, and at `now`, when some of its
 * devices may have timed out: those devices only are read again. The ones found online stay or
 * join with their heartbeat, the others leave. The replaced snapshot's maps and heap are taken
 * over (nothing reads them after this), its set is not.
 */
async function advance(
  db: Db,
  networkId: string,
  before: Taken,
  moved: readonly string[],
  now: number,
): Promise<Taken> {
  const cutoff = onlineSince(now);
  const { seen, due, hashes, digest } = before;
  const check = new Set(moved);
  for (let top = due.peek(); top !== undefined && top.at <= cutoff; top = due.peek()) {
    due.pop();
    if (seen.get(top.id) === top.at) check.add(top.id);
  }
  const ids = [...check];
  const still = await onlineAmong(db, networkId, ids, now);
  const left: string[] = [];
  const joined: string[] = [];
  for (const id of ids) {
    const at = still.get(id);
    const member = seen.has(id);
    if (at === undefined) {
      if (!member) continue;
      left.push(id);
      seen.delete(id);
      digest.toggle(hashes.get(id)!, 0);
      hashes.delete(id);
      continue;
    }
    if (seen.get(id) !== at) {
      seen.set(id, at);
      due.push({ id, at });
    }
    if (!member) {
      joined.push(id);
      const hash = hashOf(id);
      hashes.set(id, hash);
      digest.toggle(hash, 0);
    }
  }
  const previous = before.snapshot;
  previous.madeFrom = undefined;
  return made(seen, due, hashes, digest, {
    online: previous.online.changed(left, joined),
    madeFrom: { snapshot: previous, left, joined },
  });
}

function made(
  seen: Map<string, number>,
  due: MinHeap<Seen>,
  hashes: Map<string, Uint32Array>,
  digest: SetDigest,
  set: Pick<PresenceSnapshot, 'online' | 'madeFrom'>,
): Taken {
  // Stale entries off the top, so the first is the oldest heartbeat of a member.
  for (let top = due.peek(); top !== undefined && seen.get(top.id) !== top.at; top = due.peek()) due.pop();
  return {
    // One literal with every field (`madeFrom` undefined when there is none). Spread from
    // `set`, a snapshot was given a hidden class of its own at almost every advance, on which
    // clearing `madeFrom` then made V8 generalise the field and throw away the optimised code
    // that relied on it (46 times in the two policy changes of a 2,500-device fleet).
    snapshot: { online: set.online, digest: `${digest.hex()}.${seen.size}`, madeFrom: set.madeFrom },
    seen,
    due,
    hashes,
    digest,
    validUntil: onlineUntil(due.peek()?.at ?? Number.POSITIVE_INFINITY),
  };
}

function hashOf(id: string): Uint32Array {
  const hash = new Uint32Array(DIGEST_WORDS);
  hashInto(id, hash, 0);
  return hash;
}

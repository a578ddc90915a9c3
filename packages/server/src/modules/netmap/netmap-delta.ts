/**
 * Delta netmaps: what a device was last sent, so that its next fetch can carry only the peers
 * that changed or went away since (`GET /v1/node/netmap?delta=true` with `If-None-Match`).
 *
 * Per process, by design: a delta is an optimisation, never needed for correctness. The entry
 * of a device names the version it was sent, and a version names one view of the device in
 * the database (netmap.service.ts bumps it by compare-and-set whenever the view's hash
 * changes), so an entry is either for exactly the version the agent holds or ignored, on
 * whichever instance. A device whose previous map this instance did not send, or no longer
 * holds, gets the full map.
 *
 * Memory. A device that sees everyone shares its class's list with every other member
 * (netmap.cache.ts), so the entry of each such device is a reference and an index. Lists are
 * held strongly by a least-recently-used set bounded by their total number of peers; entries
 * hold them weakly, so an evicted list is freed once no view needs it, and its devices get the
 * full map next time.
 */

/** A peer list as sent: peer ids and their JSON texts, index-aligned. */
export interface ServedPeers {
  ids: readonly string[];
  texts: readonly string[];
}

/** The changes that turn one peer list into another: new or changed peers, and removed ids. */
export interface PeerChanges {
  changed: string[];
  removed: string[];
}

/**
 * The changes from `before` (less its entry `skipBefore`, -1 for none) to `after` (less
 * `skipAfter`). Lists of one view share their ids array, and then are compared entry by entry;
 * unchanged entries are usually the same string, which compares in constant time.
 */
export function diffPeers(before: ServedPeers, skipBefore: number, after: ServedPeers, skipAfter: number): PeerChanges {
  const changed: string[] = [];
  const removed: string[] = [];
  if (before.ids === after.ids) {
    for (let i = 0; i < after.ids.length; i++) {
      if (i === skipAfter) {
        if (i !== skipBefore) removed.push(before.ids[i]);
      } else if (i === skipBefore || before.texts[i] !== after.texts[i]) changed.push(after.texts[i]);
    }
    return { changed, removed };
  }
  const old = new Map<string, string>();
  for (let i = 0; i < before.ids.length; i++) if (i !== skipBefore) old.set(before.ids[i], before.texts[i]);
  for (let i = 0; i < after.ids.length; i++) {
    if (i === skipAfter) continue;
    const id = after.ids[i];
    if (old.get(id) !== after.texts[i]) changed.push(after.texts[i]);
    old.delete(id);
  }
  // The device itself is never its own peer, whichever list it sat in.
  if (skipAfter >= 0) old.delete(after.ids[skipAfter]);
  for (const id of old.keys()) removed.push(id);
  return { changed, removed };
}

interface Sent {
  version: number;
  peers: WeakRef<ServedPeers>;
  skip: number;
}

/**
 * Devices whose last map is remembered, and peers held by remembered lists, per process. A
 * held list keeps its peers' texts alive (about 150 bytes each, shared by the lists of one
 * view), so a million peers bound what deltas hold on to at about 150 MB in the worst case:
 * every list from another view.
 */
const MAX_DEVICES = 200_000;
const MAX_HELD_PEERS = 1_000_000;

const sent = new Map<string, Sent>();
const held = new Map<ServedPeers, number>();
let heldPeers = 0;

/** Remembers that `deviceId` was sent `peers` (less entry `skip`) as `version`. */
export function rememberSent(deviceId: string, version: number, peers: ServedPeers, skip = -1): void {
  sent.delete(deviceId);
  sent.set(deviceId, { version, peers: new WeakRef(peers), skip });
  if (sent.size > MAX_DEVICES) sent.delete(sent.keys().next().value as string);
  if (held.has(peers)) {
    held.delete(peers);
    held.set(peers, peers.ids.length);
    return;
  }
  held.set(peers, peers.ids.length);
  heldPeers += peers.ids.length;
  while (heldPeers > MAX_HELD_PEERS && held.size > 1) {
    const [oldest, size] = held.entries().next().value as [ServedPeers, number];
    held.delete(oldest);
    heldPeers -= size;
  }
}

/** What `deviceId` was sent as `version`, when this process still holds it. */
export function sentAt(deviceId: string, version: number): { peers: ServedPeers; skip: number } | undefined {
  const entry = sent.get(deviceId);
  if (!entry || entry.version !== version) return undefined;
  const peers = entry.peers.deref();
  return peers && { peers, skip: entry.skip };
}

/** The version an `If-None-Match` header names (the first one, quoted or bare, possibly weak). */
export function sinceVersion(header: string | undefined): number | undefined {
  const first = header
    ?.split(',')[0]
    ?.trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
  return first && /^\d{1,15}$/.test(first) ? Number(first) : undefined;
}

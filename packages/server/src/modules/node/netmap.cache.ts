/**
 * The per-process cache behind netmaps: one NetworkView per network, valid for one
 * (netmap epoch, policy version and ETag) as read from the database. Every change that can
 * alter who sees whom — enrollment, deletion, tags, routes, user roles, the policy — bumps the
 * epoch in its own transaction, so an instance never serves a view older than the database,
 * whichever instance made the change.
 *
 * Which router is primary for a prefix also depends on presence, which changes with time and
 * not with the epoch. The view therefore keeps its peer map per primary assignment: the caller
 * computes the assignment from the approved routes on each request (a small query) and the
 * peer map is rebuilt only when it differs.
 */
import { type CompiledPolicy, PeerMap, type PeerView, type PolicyDevice, type PolicyUser } from '../../policy/index.js';
import type { Db } from '../../storage/database.js';
import { currentPolicy } from '../acl/policy-cache.js';
import {
  type DeviceIdentityRow,
  deviceIdentities,
  policyDevice,
  policyUsers,
} from '../acl/policy-inputs.repository.js';
import { isOnline } from '../devices/presence.js';
import { isExitRoute } from '../routes/routes.presenter.js';
import type { NetmapHead, ServedRouteRow } from './netmap.repository.js';
import type { ServedPeers } from './netmap-delta.js';
import type { PresenceSnapshot } from './presence-snapshot.js';
import { DIGEST_WORDS, hashInto, SetDigest } from './set-digest.js';

/**
 * The routes the peer map is built from: device id → every approved, advertised prefix it
 * serves (`served`, which IP and CIDR selectors match, so a standby router is a peer before it
 * takes over) and those it serves as primary (`byDevice`, which reach allowedIPs). `key` names
 * the assignment.
 */
export interface Primaries {
  byDevice: Map<string, string[]>;
  served: Map<string, string[]>;
  key: string;
}

function pushTo(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Per prefix, the earliest approved route (then the lowest id) whose device is online — the
 * rule the routes presenter's SQL applies. Default routes are not failed over: every online
 * exit node serves them.
 */
export function choosePrimaries(rows: readonly ServedRouteRow[], now: number): Primaries {
  const best = new Map<string, ServedRouteRow>();
  const served = new Map<string, string[]>();
  const servedIds: string[] = [];
  for (const row of rows) {
    pushTo(served, row.device_id, row.prefix);
    servedIds.push(row.id);
    if (!isOnline(row, now)) continue;
    if (isExitRoute(row.prefix)) {
      best.set(`${row.prefix} ${row.id}`, row);
      continue;
    }
    const current = best.get(row.prefix);
    const at = Number(row.approved_at ?? 0);
    const currentAt = Number(current?.approved_at ?? 0);
    if (!current || at < currentAt || (at === currentAt && row.id < current.id)) best.set(row.prefix, row);
  }
  const byDevice = new Map<string, string[]>();
  const ids: string[] = [];
  for (const row of best.values()) {
    ids.push(row.id);
    pushTo(byDevice, row.device_id, row.prefix);
  }
  for (const list of byDevice.values()) list.sort();
  for (const list of served.values()) list.sort();
  return { byDevice, served, key: `${ids.sort().join(',')}|${servedIds.sort().join(',')}` };
}

/** Every device of a view as the members of one class see it, for one presence snapshot. */
export interface ClassList {
  presence: PresenceSnapshot;
  /** The peers' ids and texts, index-aligned with the view's devices (netmap-delta.ts). */
  peers: ServedPeers;
  joined: string;
  /** starts[i]: where device i's entry begins in `joined`; starts[n]: its length + 1. */
  starts: Int32Array;
}

export class NetworkView {
  readonly index: Map<string, number>;
  /** Every device's id, in view order: shared by the peer lists made from this view. */
  private readonly ids: readonly string[];
  private readonly devices: PolicyDevice[];
  private readonly peerFields: Array<string | undefined>;
  /** Per device, its whole peer JSON when offline (2i) and online (2i + 1). */
  private readonly plainPeers: Array<string | undefined>;
  private peerMap:
    | {
        key: string;
        map: PeerMap;
        classDigests: Map<number, SetDigest>;
        /** Per class that sees everyone, every device's JSON as it sees it, for one presence. */
        classLists: Map<number, ClassList>;
      }
    | undefined;
  /** Per device, the hash of its peer text as every viewer sees it when no route is involved. */
  private readonly plainHashes: Uint32Array;
  private readonly plainHashed: Uint8Array;
  /** Per device, the hash of its id (a member of presence digests). */
  private readonly idHashes: Uint32Array;
  private readonly idHashed: Uint8Array;
  private readonly scratch = new Uint32Array(DIGEST_WORDS);
  private online: { snapshot: PresenceSnapshot; digest: SetDigest } | undefined;
  /**
   * Per device, the stamp of the inputs its netmap was last built from here and that netmap's
   * hash: while both still hold, its stored version is current (netmap.service.ts).
   */
  readonly versions = new Map<string, { stamp: string; hash: string }>();

  constructor(
    readonly key: string,
    private readonly policy: CompiledPolicy,
    private readonly rows: DeviceIdentityRow[],
    private readonly users: PolicyUser[],
  ) {
    this.devices = rows.map((row) => policyDevice(row));
    this.index = new Map(rows.map((row, i) => [row.id, i]));
    this.ids = rows.map((row) => row.id);
    this.peerFields = new Array(rows.length);
    this.plainPeers = new Array(2 * rows.length);
    this.plainHashes = new Uint32Array(DIGEST_WORDS * rows.length);
    this.plainHashed = new Uint8Array(rows.length);
    this.idHashes = new Uint32Array(DIGEST_WORDS * rows.length);
    this.idHashed = new Uint8Array(rows.length);
  }

  get size(): number {
    return this.rows.length;
  }

  /** The peer map for a primary assignment, rebuilt only when the assignment changed. */
  peersFor(primaries: Primaries): PeerMap {
    if (this.peerMap?.key !== primaries.key) {
      const devices =
        primaries.served.size === 0
          ? this.devices
          : this.devices.map((d) => {
              const routes = primaries.served.get(d.id);
              return routes ? { ...d, routes, primaryRoutes: primaries.byDevice.get(d.id) ?? [] } : d;
            });
      this.peerMap = {
        key: primaries.key,
        map: new PeerMap(this.policy, devices, this.users),
        classDigests: new Map(),
        classLists: new Map(),
      };
    }
    return this.peerMap.map;
  }

  /**
   * The JSON of a peer as every viewer sees it when no route of it is visible: the peer map
   * then hands out the same frozen allowedIPs (its addresses) to every viewer, so the text is
   * made once per view and presence. Otherwise only the fields that do not depend on the viewer
   * are reused.
   */
  peerJson(i: number, view: PeerView, online: boolean): string {
    if (this.isPlain(i, view)) {
      const slot = 2 * i + (online ? 1 : 0);
      let text = this.plainPeers[slot];
      if (text === undefined) {
        text = `${this.peerText(i, view)},"online":${online}}`;
        this.plainPeers[slot] = text;
      }
      return text;
    }
    return `${this.peerText(i, view)},"online":${online}}`;
  }

  /** Frozen and as long as the peer's addresses: the view every viewer shares when no route shows. */
  private isPlain(i: number, view: PeerView): boolean {
    return Object.isFrozen(view) && view.allowedIPs.length === this.devices[i].addresses.length;
  }

  /** A peer's JSON up to its presence: what the peer is, as this viewer sees it. */
  private peerText(i: number, view: PeerView): string {
    return `${this.peerPrefix(i)}${JSON.stringify(view.allowedIPs)}`;
  }

  /**
   * What a device's netmap is made of besides its own record, as a string that changes exactly
   * when that does: a digest of its peers as it sees them, and one of those of them that are
   * online. A device that sees everyone (PeerMap.everyoneClassOf) gets both from digests kept
   * for the whole network, in constant time: its class's view of every device, and every online
   * device, each less the device itself. Any other device's peers are listed and hashed.
   */
  fingerprint(
    primaries: Primaries,
    deviceId: string,
    presence: PresenceSnapshot,
    /** `list`: hash every peer even when a shortcut applies (the reference the shortcut must equal). */
    how: 'auto' | 'list' = 'auto',
  ): string {
    const map = this.peersFor(primaries);
    const d = this.index.get(deviceId);
    if (d === undefined) return '';
    const structure = new SetDigest();
    const online = new SetDigest();
    const c = how === 'auto' ? map.everyoneClassOf(deviceId) : undefined;
    if (c !== undefined) {
      structure.merge(this.classDigest(c)).toggle(...this.peerHash(d, map.classView(c, d)));
      online.merge(this.onlineDigest(presence));
      if (presence.online.has(deviceId)) online.toggle(...this.idHash(d));
    } else {
      for (const peer of map.peers(deviceId)) {
        const i = this.index.get(peer.id)!;
        structure.toggle(...this.peerHash(i, peer));
        if (presence.online.has(peer.id)) online.toggle(...this.idHash(i));
      }
    }
    return `${structure.hex()}${online.hex()}`;
  }

  /**
   * The peers of a device that sees everyone (PeerMap.everyoneClassOf): its class's list of
   * every device, made once per presence snapshot and shared by the class, with the index of
   * the device's own entry, which is not a peer. Undefined for any other device.
   */
  everyonePeers(
    primaries: Primaries,
    deviceId: string,
    presence: PresenceSnapshot,
  ): { list: ClassList; skip: number } | undefined {
    const map = this.peersFor(primaries);
    const c = map.everyoneClassOf(deviceId);
    const d = this.index.get(deviceId);
    if (c === undefined || d === undefined) return undefined;
    const holder = this.peerMap!;
    let list = holder.classLists.get(c);
    if (list?.presence !== presence) {
      const n = this.devices.length;
      const parts: string[] = new Array(n);
      const starts = new Int32Array(n + 1);
      for (let i = 0, at = 0; i < n; i++) {
        parts[i] = this.peerJson(i, map.classView(c, i), presence.online.has(this.devices[i].id));
        starts[i] = at;
        at += parts[i].length + 1;
        starts[i + 1] = at;
      }
      list = { presence, peers: { ids: this.ids, texts: parts }, joined: parts.join(','), starts };
      holder.classLists.set(c, list);
    }
    return { list, skip: d };
  }

  /** The JSON array of everyonePeers; undefined for a device that does not see everyone. */
  everyonePeersJson(primaries: Primaries, deviceId: string, presence: PresenceSnapshot): string | undefined {
    const peers = this.everyonePeers(primaries, deviceId, presence);
    return peers && joinedWithout(peers.list, peers.skip);
  }

  /** The peers of any device, listed: their ids and texts in view order. */
  listedPeers(primaries: Primaries, deviceId: string, presence: PresenceSnapshot): ServedPeers {
    const peers = this.peersFor(primaries).peers(deviceId);
    const ids: string[] = new Array(peers.length);
    const texts: string[] = new Array(peers.length);
    for (let k = 0; k < peers.length; k++) {
      const peer = peers[k];
      ids[k] = peer.id;
      texts[k] = this.peerJson(this.index.get(peer.id)!, peer, presence.online.has(peer.id));
    }
    return { ids, texts };
  }

  /** Every device as members of class `c` see it, for the current primaries; kept per class. */
  private classDigest(c: number): SetDigest {
    const holder = this.peerMap!;
    let digest = holder.classDigests.get(c);
    if (!digest) {
      digest = new SetDigest();
      for (let i = 0; i < this.devices.length; i++) digest.toggle(...this.peerHash(i, holder.map.classView(c, i)));
      holder.classDigests.set(c, digest);
    }
    return digest;
  }

  /** Every online device of this view, for one presence snapshot. */
  private onlineDigest(presence: PresenceSnapshot): SetDigest {
    if (this.online?.snapshot !== presence) {
      const digest = new SetDigest();
      for (const id of presence.online) {
        const i = this.index.get(id);
        if (i !== undefined) digest.toggle(...this.idHash(i));
      }
      this.online = { snapshot: presence, digest };
    }
    return this.online.digest;
  }

  private peerHash(i: number, view: PeerView): [Uint32Array, number] {
    const at = DIGEST_WORDS * i;
    if (this.isPlain(i, view)) {
      if (!this.plainHashed[i]) {
        hashInto(this.peerText(i, view), this.plainHashes, at);
        this.plainHashed[i] = 1;
      }
      return [this.plainHashes, at];
    }
    hashInto(this.peerText(i, view), this.scratch, 0);
    return [this.scratch, 0];
  }

  private idHash(i: number): [Uint32Array, number] {
    const at = DIGEST_WORDS * i;
    if (!this.idHashed[i]) {
      hashInto(this.devices[i].id, this.idHashes, at);
      this.idHashed[i] = 1;
    }
    return [this.idHashes, at];
  }

  private peerPrefix(i: number): string {
    let text = this.peerFields[i];
    if (text === undefined) {
      const d = this.devices[i];
      const name = this.rows[i].name;
      text = `{"id":${JSON.stringify(d.id)},"name":${JSON.stringify(name)},"addresses":${JSON.stringify(d.addresses)},"tags":${JSON.stringify(d.tags)},"allowedIPs":`;
      this.peerFields[i] = text;
    }
    return text;
  }
}

/** A class list's JSON array less entry `d`: two slices of the joined text, not one string per peer. */
export function joinedWithout({ joined, starts }: ClassList, d: number): string {
  const last = starts.length - 2;
  if (last === 0) return '[]';
  // Drop the entry with the comma after it, or before it for the last one.
  if (d === last) return `[${joined.slice(0, starts[d] - 1)}]`;
  return `[${joined.slice(0, starts[d])}${joined.slice(starts[d + 1])}]`;
}

/** Networks whose view is kept; the least recently used is dropped past this. */
const MAX_NETWORKS = 64;
const views = new Map<string, { key: string; view: Promise<NetworkView> }>();

const viewKey = (head: NetmapHead) => `${head.epoch}:${head.policyVersion}:${head.policyEtag}`;

/** The network's view for this head, loading it (once, for concurrent callers) on a miss. */
export function networkView(db: Db, networkId: string, head: NetmapHead, reload = false): Promise<NetworkView> {
  const key = viewKey(head);
  const hit = views.get(networkId);
  if (hit && hit.key === key && !reload) {
    views.delete(networkId);
    views.set(networkId, hit);
    return hit.view;
  }
  const view = loadView(db, networkId, key);
  views.delete(networkId);
  views.set(networkId, { key, view });
  if (views.size > MAX_NETWORKS) views.delete(views.keys().next().value as string);
  view.catch(() => {
    if (views.get(networkId)?.view === view) views.delete(networkId);
  });
  return view;
}

async function loadView(db: Db, networkId: string, key: string): Promise<NetworkView> {
  // Read after the head that names this view: a change committed in between makes the view
  // newer than its key, never older, and the next request's head reloads it.
  const [policy, rows, users] = await Promise.all([
    currentPolicy(db, networkId),
    deviceIdentities(db, networkId),
    policyUsers(db, networkId),
  ]);
  return new NetworkView(key, policy.compiled, rows, users);
}

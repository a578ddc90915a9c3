/**
 * One network's view as the policy sees it, for one (netmap epoch, policy version and ETag):
 * its devices, the peer map per primary assignment, and what is kept per device to make peer
 * texts and version digests without redoing them per request (see netmap.cache.ts for how
 * views are kept and patched).
 *
 * How to read it:
 *  - Devices are numbered by their *slot*, their place in `rows` (the view's query order);
 *    every per-device array below is indexed by slot, and `index` maps a device id to it.
 *    Typed arrays hold the hashes (DIGEST_WORDS words per slot) so 10,000 devices cost a few
 *    flat buffers rather than 10,000 objects.
 *  - A peer's *text* is its JSON as a netmap carries it. Most viewers see a peer *plain* (its
 *    addresses only, no route of it visible to them), so the plain text is made once per slot
 *    and presence (`plainPeers`) and its hash once per slot (`plainHashes`).
 *  - A *class* is an identity class of the policy (policy/peers.ts): devices the policy cannot
 *    tell apart. A device whose class sees every device gets its peer list and its digest from
 *    what is kept once for the class (`classLists`, `classDigests`), not made per device.
 *  - A *digest* (set-digest.ts) is an order-free hash of a set that can be updated by toggling
 *    one member: a device's netmap version is the digest of its peers and of those online
 *    (`fingerprint`), so a change to one peer costs one toggle, not a rehash of the network.
 *  - A view is *patched* from the one before (patched, Derivation): unchanged slots carry
 *    everything over; only the changed devices' slots are made again.
 */
import {
  type CompiledPolicy,
  PeerMap,
  type PeerMapDerivation,
  type PeerView,
  type PolicyDevice,
  type PolicyUser,
  peerReachKey,
} from '../../policy/index.js';
import { type ClassList, joinedWithout, makeClassList, patchClassList } from './netmap-class-list.js';
import type { ServedPeers } from './netmap-delta.js';
import type { Primaries } from './netmap-primaries.js';
import { type MergedRows, mergeRows } from './netmap-rows.js';
import { type DeviceIdentityRow, policyDevice } from './policy-inputs.repository.js';
import type { PresenceSnapshot } from './presence-snapshot.js';
import { DIGEST_WORDS, hashInto, SetDigest } from './set-digest.js';
import { SlotIndex } from './slot-index.js';

/**
 * How a view comes from an earlier one: `from[i]` is the index there of device i when its row
 * is unchanged, else -1 (changed or new). `sameSlots`: no device left, so every unchanged
 * device kept its index (`from[i]` is i or -1) and new ones were appended.
 */
interface Derivation extends Omit<MergedRows, 'rows'> {
  view: NetworkView;
}

/**
 * How a view comes from an earlier one of the same devices under another policy (withPolicy):
 * `sameReach` when the two policies have one reach key (policy/peer-reach.ts), so who sees whom
 * and every allowedIPs are as they were.
 */
interface Repolicy {
  view: NetworkView;
  sameReach: boolean;
}

/** The peer map of one primary assignment, and what is summed up per class from it. */
interface MapState {
  primaries: Primaries;
  map: PeerMap;
  classDigests: Map<number, SetDigest>;
  /** Per class that sees everyone, every device's JSON as it sees it, for one presence. */
  classLists: Map<number, ClassList>;
  /**
   * Per class, a list of an earlier state and the slots changed since, made current on first
   * use (patchClassList): a patch costs nothing per class list until a device is served one.
   */
  staleLists: Map<number, { list: ClassList; changed: Set<number> }>;
}

const newState = (primaries: Primaries, map: PeerMap): MapState => ({
  primaries,
  map,
  classDigests: new Map(),
  classLists: new Map(),
  staleLists: new Map(),
});

export class NetworkView {
  /**
   * Device id → index. Shared with the view it was patched from, which sees only its own
   * devices in it, when no device left (slot-index.ts).
   */
  readonly index: SlotIndex;
  /** Every device's id, in view order: shared by the peer lists made from this view. */
  private readonly ids: readonly string[];
  private readonly devices: PolicyDevice[];
  private readonly peerFields: Array<string | undefined>;
  /** Per device, its whole peer JSON when offline (2i) and online (2i + 1). */
  private readonly plainPeers: Array<string | undefined>;
  private peerMap: MapState | undefined;
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

  /**
   * With `derived`, the view is a patch of an earlier one of the same policy (see patched and
   * Derivation). Everything kept per unchanged device (its texts and hashes, its place in the
   * peer map) carries over.
   */
  constructor(
    readonly key: string,
    private readonly policy: CompiledPolicy,
    private readonly rows: DeviceIdentityRow[],
    /** The network's users as the policy sees them (login and role). */
    readonly users: PolicyUser[],
    derived?: Derivation | Repolicy,
  ) {
    const n = rows.length;
    if (derived && 'sameReach' in derived) {
      // The same devices: everything kept per device is made of their rows alone (texts,
      // hashes, the index), so it is shared rather than copied, and a policy change leaves
      // old space none of it to collect. What the two views fill in later (a text or hash
      // made on first use) is the same whichever fills it.
      const prev = derived.view;
      this.devices = prev.devices;
      this.peerFields = prev.peerFields;
      this.plainPeers = prev.plainPeers;
      this.plainHashes = prev.plainHashes;
      this.plainHashed = prev.plainHashed;
      this.idHashes = prev.idHashes;
      this.idHashed = prev.idHashed;
      this.ids = prev.ids;
      this.index = prev.index;
      this.online = prev.online;
      // The peer map and what is summed up from it depend on the policy only through its
      // reach: with the same reach, the one held answers for this policy too (its class lists
      // and digests included); else it is made on first use under this policy.
      this.peerMap = derived.sameReach ? prev.peerMap : undefined;
      return;
    }
    if (derived?.sameSlots) {
      // Every device kept its slot: copy what the earlier view holds wholesale, then redo the
      // changed and appended slots. This is what makes a re-tag cheap at 10,000 devices.
      const prev = derived.view;
      const { from } = derived;
      const m = prev.rows.length;
      this.devices = prev.devices.slice();
      this.peerFields = prev.peerFields.slice();
      this.plainPeers = prev.plainPeers.slice();
      this.plainHashes = new Uint32Array(DIGEST_WORDS * n);
      this.plainHashes.set(prev.plainHashes.subarray(0, DIGEST_WORDS * m));
      this.plainHashed = new Uint8Array(n);
      this.plainHashed.set(prev.plainHashed);
      this.idHashes = new Uint32Array(DIGEST_WORDS * n);
      this.idHashes.set(prev.idHashes.subarray(0, DIGEST_WORDS * m));
      this.idHashed = new Uint8Array(n);
      this.idHashed.set(prev.idHashed);
      const added = n > m;
      this.ids = added ? rows.map((row) => row.id) : prev.ids;
      this.index = added ? prev.index.appended(this.ids.slice(m)) : prev.index;
      for (let i = 0; i < n; i++) {
        if (from[i] >= 0) continue;
        this.devices[i] = policyDevice(rows[i]);
        this.peerFields[i] = undefined;
        this.plainPeers[2 * i] = undefined;
        this.plainPeers[2 * i + 1] = undefined;
        this.plainHashed[i] = 0;
      }
    } else {
      const prev = derived?.view;
      const from = derived?.from;
      this.devices = new Array(n);
      this.peerFields = new Array(n);
      this.plainPeers = new Array(2 * n);
      this.plainHashes = new Uint32Array(DIGEST_WORDS * n);
      this.plainHashed = new Uint8Array(n);
      this.idHashes = new Uint32Array(DIGEST_WORDS * n);
      this.idHashed = new Uint8Array(n);
      for (let i = 0; i < n; i++) {
        const j = from ? from[i] : -1;
        if (prev && j >= 0) {
          this.devices[i] = prev.devices[j];
          this.copySlot(prev, j, i);
        } else this.devices[i] = policyDevice(rows[i]);
      }
      this.ids = rows.map((row) => row.id);
      this.index = SlotIndex.of(this.ids);
    }
    const held = derived?.view.peerMap;
    if (held && derived) {
      this.peerMap = this.derivedState(derived.view, held, held.primaries, derived.from, derived.sameSlots);
    }
  }

  /**
   * The state of a peer map for `primaries` derived from `held` (a state of `prev`, this view
   * or the one it was patched from), where `from` names the unchanged slots. With the same
   * slots, each class's digest and list carry over with only the changed slots redone, so a
   * device that sees everyone pays for the change, not for the network.
   */
  private derivedState(
    prev: NetworkView,
    held: MapState,
    primaries: Primaries,
    from: Int32Array,
    sameSlots: boolean,
  ): MapState {
    if (!held.map.derivable) {
      return newState(primaries, this.derivedMap(primaries));
    }
    const map = this.derivedMap(primaries, { map: held.map, from, sameSlots });
    const state = newState(primaries, map);
    if (!sameSlots) return state;
    const changed: number[] = [];
    for (let i = 0; i < from.length; i++) if (from[i] < 0) changed.push(i);
    const before = prev.rows.length;
    for (const [cls, digest] of held.classDigests) {
      const next = new SetDigest().merge(digest);
      for (const i of changed) {
        if (i < before) next.toggle(...prev.peerHash(i, held.map.classView(cls, i)));
        next.toggle(...this.peerHash(i, map.classView(cls, i)));
      }
      state.classDigests.set(cls, next);
    }
    // Lists carry over while the devices are the same ids in the same order.
    if (this.ids === prev.ids) {
      for (const [cls, stale] of held.staleLists) {
        state.staleLists.set(cls, { list: stale.list, changed: new Set([...stale.changed, ...changed]) });
      }
      for (const [cls, list] of held.classLists) state.staleLists.set(cls, { list, changed: new Set(changed) });
    }
    return state;
  }

  /** Copies what `prev` keeps for its device j to slot i. */
  private copySlot(prev: NetworkView, j: number, i: number): void {
    this.peerFields[i] = prev.peerFields[j];
    this.plainPeers[2 * i] = prev.plainPeers[2 * j];
    this.plainPeers[2 * i + 1] = prev.plainPeers[2 * j + 1];
    this.plainHashed[i] = prev.plainHashed[j];
    this.idHashed[i] = prev.idHashed[j];
    for (let w = 0; w < DIGEST_WORDS; w++) {
      this.plainHashes[DIGEST_WORDS * i + w] = prev.plainHashes[DIGEST_WORDS * j + w];
      this.idHashes[DIGEST_WORDS * i + w] = prev.idHashes[DIGEST_WORDS * j + w];
    }
  }

  /** A peer map for `primaries`, derived from an earlier one (PeerMap) or built anew. */
  private derivedMap(primaries: Primaries, derived?: PeerMapDerivation): PeerMap {
    return new PeerMap(this.policy, this.withRoutes(primaries), this.users, { derived, byId: this.index });
  }

  /**
   * This view with the devices `changedIds` names read again: `rows` are those that still
   * exist (a changed id without a row was deleted), in the order of the full view's query, and
   * `users` every user the view knows after the change. Unchanged devices keep their place,
   * changed ones are replaced where they were, new ones are appended; the peer map is derived
   * from this one's by identity class (PeerMap), so the work follows the change, not the network.
   */
  patched(
    key: string,
    rows: readonly DeviceIdentityRow[],
    changedIds: Iterable<string>,
    users: PolicyUser[],
  ): NetworkView {
    const merged = mergeRows(this.rows, this.index, rows, changedIds);
    return new NetworkView(key, this.policy, merged.rows, users, { view: this, ...merged });
  }

  /**
   * This view under another policy: the same devices, rows and users (no row is read again),
   * with the peer map kept when who sees whom is the same under both (peerReachKey) and made
   * anew under `policy` otherwise. This view is left as it is for those that hold it.
   */
  withPolicy(key: string, policy: CompiledPolicy): NetworkView {
    const sameReach = peerReachKey(policy) === peerReachKey(this.policy);
    return new NetworkView(key, policy, this.rows, this.users, { view: this, sameReach });
  }

  /** The view's devices with the routes they serve under `primaries` (what the peer map reads). */
  private withRoutes(primaries: Primaries): PolicyDevice[] {
    if (primaries.served.size === 0) return this.devices;
    return this.devices.map((device) => {
      const routes = primaries.served.get(device.id);
      return routes ? { ...device, routes, primaryRoutes: primaries.byDevice.get(device.id) ?? [] } : device;
    });
  }

  get size(): number {
    return this.rows.length;
  }

  /** The policy this view was made with: what the packet filters of its devices compile from. */
  get compiledPolicy(): CompiledPolicy {
    return this.policy;
  }

  /** The device in slot `i` as the policy sees it (no routes). */
  policyDeviceAt(i: number): PolicyDevice {
    return this.devices[i];
  }

  /**
   * The peer map for a primary assignment. When the assignment moved (a router went offline
   * or came back), the map is derived from the one held, placing again only the routers whose
   * routes changed.
   */
  peersFor(primaries: Primaries): PeerMap {
    const held = this.peerMap;
    if (held?.primaries.key !== primaries.key) {
      this.peerMap = held
        ? this.derivedState(this, held, primaries, this.unmoved(held.primaries, primaries), true)
        : newState(primaries, this.derivedMap(primaries));
    }
    return this.peerMap!.map;
  }

  /** Each device's own index, or -1 for the routers whose routes differ between a and b. */
  private unmoved(a: Primaries, b: Primaries): Int32Array {
    const from = Int32Array.from(this.devices, (_, i) => i);
    for (const side of [a, b]) {
      for (const id of [...side.served.keys(), ...side.byDevice.keys()]) {
        const i = this.index.get(id);
        if (i === undefined) continue;
        const same =
          String(a.served.get(id)) === String(b.served.get(id)) &&
          String(a.byDevice.get(id)) === String(b.byDevice.get(id));
        if (!same) from[i] = -1;
      }
    }
    return from;
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
    const self = this.index.get(deviceId);
    if (self === undefined) return '';
    const structure = new SetDigest();
    const online = new SetDigest();
    const cls = how === 'auto' ? map.everyoneClassOf(deviceId) : undefined;
    if (cls !== undefined) {
      structure.merge(this.classDigest(cls)).toggle(...this.peerHash(self, map.classView(cls, self)));
      online.merge(this.onlineDigest(presence));
      if (presence.online.has(deviceId)) online.toggle(...this.idHash(self));
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
    const cls = map.everyoneClassOf(deviceId);
    const self = this.index.get(deviceId);
    if (cls === undefined || self === undefined) return undefined;
    const holder = this.peerMap!;
    let list = holder.classLists.get(cls);
    if (list?.presence !== presence) {
      const textOf = (i: number) => this.peerJson(i, map.classView(cls, i), presence.online.has(this.ids[i]));
      const stale = holder.staleLists.get(cls);
      list =
        stale?.list.presence === presence
          ? patchClassList(
              stale.list,
              this.ids,
              [...stale.changed].sort((a, b) => a - b),
              textOf,
            )
          : makeClassList(this.ids, presence, textOf);
      holder.classLists.set(cls, list);
      holder.staleLists.delete(cls);
    }
    return { list, skip: self };
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

  /** Every device as members of class `cls` see it, for the current primaries; kept per class. */
  private classDigest(cls: number): SetDigest {
    const holder = this.peerMap!;
    let digest = holder.classDigests.get(cls);
    if (!digest) {
      digest = new SetDigest();
      for (let i = 0; i < this.devices.length; i++) digest.toggle(...this.peerHash(i, holder.map.classView(cls, i)));
      holder.classDigests.set(cls, digest);
    }
    return digest;
  }

  /**
   * Every online device of this view, for one presence snapshot. A snapshot made from the one
   * this digest was made for, by devices that left or joined, is followed by toggling those
   * devices (a handful) rather than hashing every online device again (10,000: about a
   * millisecond).
   */
  private onlineDigest(presence: PresenceSnapshot): SetDigest {
    if (this.online?.snapshot !== presence) {
      const from = presence.madeFrom;
      const digest = new SetDigest();
      let changed: Iterable<string> = presence.online;
      if (from && this.online?.snapshot === from.snapshot) {
        digest.merge(this.online.digest);
        changed = [...from.left, ...from.joined];
      }
      for (const id of changed) {
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
      const device = this.devices[i];
      const name = this.rows[i].name;
      text = `{"id":${JSON.stringify(device.id)},"name":${JSON.stringify(name)},"addresses":${JSON.stringify(device.addresses)},"tags":${JSON.stringify(device.tags)},"allowedIPs":`;
      this.peerFields[i] = text;
    }
    return text;
  }
}

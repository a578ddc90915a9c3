// The devices of a network as the policy sees them: identity classes (devices with the same
// tags, or the same user, are indistinguishable to every selector except addresses), the
// routes each device serves, and which address prefixes of the policy hold each device.

import { addressKey, isLoneV6, type Prefix, parsePrefix } from './cidr.js';
import { identityKeys, roleMap } from './subjects.js';
import type { CompiledPolicy, PolicyDevice, PolicyUser } from './types.js';

export interface DeviceClass {
  /** Principal keys (see subjects.ts) shared by every member. */
  keys: string[];
  /** An untagged device of a user: autogroup:self pairs the class with itself. */
  isUser: boolean;
  /** Device indexes, ascending. */
  members: number[];
}

export interface Route {
  prefix: Prefix;
  text: string;
}

/**
 * The index a new one is derived from: `from[i]` is the index in `index` of the new device i
 * when that device is unchanged (same identity, addresses and routes), or -1 when it is new or
 * changed. Everything about unchanged devices is copied; only the others are placed again.
 * `sameSlots`: no device left, so `from[i]` is i or -1 and new devices come last; then what is
 * kept per device is copied wholesale and only the changed slots are visited.
 */
export interface DerivedFrom {
  index: DeviceIndex;
  from: Int32Array;
  sameSlots: boolean;
}

/** Shared empty list (never mutated) for the many devices without routes or address matches. */
const EMPTY: number[] = [];
const NO_PREFIXES: Prefix[] = [];

export class DeviceIndex {
  readonly classOf: Int32Array;
  /**
   * Identity classes. A derived index keeps every class of the one it comes from at the same
   * number (a class whose devices all left stays, empty) and appends new ones, so whatever a
   * caller keeps per class number stays valid.
   */
  readonly classes: DeviceClass[];
  /** Principal key → the classes that carry it (shared with the earlier index until a class is added). */
  private classesByKey: Map<string, number[]>;
  /**
   * Routes served as primary: what allowedIPs carry. Append-only across derivations (a route
   * number always names the same prefix), so per-route caches carry over.
   */
  readonly routes: Route[];
  /** Device → indexes into `routes`. */
  readonly routesOf: number[][];
  /** Device → every route it serves, primary or standby: what IP and CIDR selectors match. */
  private readonly servedOf: Prefix[][];
  private matches: { byPrefix: number[][]; byDevice: number[][] } | null = null;
  /** Devices serving both 0.0.0.0/0 and ::/0 (approved, advertised): exit nodes, ascending. */
  readonly exitNodes: number[] = [];
  /** Per device: 1 for an exit node, 2 for one in service (both default routes primary, i.e. online). */
  readonly exitState: Uint8Array;
  /** The classes this index added to the one it was derived from (all of them when built anew). */
  readonly firstNewClass: number;
  // Class lookups keyed by the caller's own strings (no concatenation, so no rehashing).
  private userClasses: Map<string, number>;
  private tagClasses: Map<string, number>;
  /** Whether the class lookups are this index's own, or still the earlier index's. */
  private ownLookups: boolean;
  private noneClass: number;
  private readonly roles: Map<string, string>;

  constructor(
    private readonly policy: CompiledPolicy,
    private readonly devices: readonly PolicyDevice[],
    users: readonly PolicyUser[],
    derived?: DerivedFrom,
  ) {
    const n = devices.length;
    const prev = derived?.index;
    this.roles = roleMap(users);
    this.classesByKey = prev ? prev.classesByKey : new Map();
    this.userClasses = prev ? prev.userClasses : new Map();
    this.tagClasses = prev ? prev.tagClasses : new Map();
    this.ownLookups = !prev;
    this.noneClass = prev ? prev.noneClass : -1;
    this.routes = prev ? prev.routes.slice() : [];
    this.classOf = new Int32Array(n);
    this.exitState = new Uint8Array(n);
    if (prev && derived?.sameSlots) {
      this.classes = prev.classes.slice();
      this.firstNewClass = this.classes.length;
      this.classOf.set(prev.classOf);
      this.exitState.set(prev.exitState);
      this.routesOf = prev.routesOf.slice();
      this.servedOf = prev.servedOf.slice();
      this.moveChanged(derived.from, prev.classOf.length);
    } else {
      this.classes = prev ? prev.classes.map((c) => ({ keys: c.keys, isUser: c.isUser, members: [] })) : [];
      this.firstNewClass = this.classes.length;
      this.routesOf = new Array(n);
      this.servedOf = new Array(n);
      for (let i = 0; i < n; i++) {
        const j = derived ? derived.from[i] : -1;
        if (j >= 0 && prev) {
          this.classOf[i] = prev.classOf[j];
          this.routesOf[i] = prev.routesOf[j];
          this.servedOf[i] = prev.servedOf[j];
          this.exitState[i] = prev.exitState[j];
        } else this.place(i);
        this.classes[this.classOf[i]].members.push(i);
      }
    }
    for (let i = 0; i < n; i++) if (this.exitState[i] > 0) this.exitNodes.push(i);
    if (prev?.matches && derived) {
      this.matches = derived.sameSlots
        ? this.moveMatches(prev.matches, derived.from)
        : this.deriveMatches(prev.matches.byDevice, derived.from);
    }
  }

  /**
   * Places the changed and new slots of a same-slots derivation (`before` slots existed in the
   * earlier index). Member lists are copied only for the classes a device leaves or joins;
   * every other class shares its list with the earlier index.
   */
  private moveChanged(from: Int32Array, before: number): void {
    const copied = new Set<number>();
    const members = (c: number) => {
      if (!copied.has(c)) {
        const old = this.classes[c];
        this.classes[c] = { keys: old.keys, isUser: old.isUser, members: old.members.slice() };
        copied.add(c);
      }
      return this.classes[c].members;
    };
    for (let i = 0; i < from.length; i++) {
      if (from[i] >= 0) continue;
      if (i < before) {
        const list = members(this.classOf[i]);
        list.splice(list.indexOf(i), 1);
      }
      this.place(i);
      const list = members(this.classOf[i]);
      // Ascending: a slot in the middle goes where it belongs, an appended one last.
      let at = list.length;
      while (at > 0 && list[at - 1] > i) at--;
      list.splice(at, 0, i);
    }
  }

  /** Principal key → the classes that carry it. */
  get keyClasses(): ReadonlyMap<string, readonly number[]> {
    return this.classesByKey;
  }

  /** Works out device i's class, routes and exit state. */
  private place(i: number): void {
    const d = this.devices[i];
    const tagged = d.tags.length > 0;
    const map = tagged ? this.tagClasses : this.userClasses;
    const classKey = tagged ? (d.tags.length === 1 ? d.tags[0] : [...d.tags].sort().join(' ')) : d.user;
    let c = classKey === null ? this.noneClass : map.get(classKey);
    if (c === undefined || c < 0) {
      if (!this.ownLookups) {
        // A new class: copy the lookups before adding to them (the earlier index keeps its own).
        this.classesByKey = new Map([...this.classesByKey].map(([k, list]) => [k, [...list]]));
        this.userClasses = new Map(this.userClasses);
        this.tagClasses = new Map(this.tagClasses);
        this.ownLookups = true;
        this.place(i);
        return;
      }
      c = this.classes.length;
      if (classKey === null) this.noneClass = c;
      else map.set(classKey, c);
      const keys = identityKeys(this.policy, d, d.user === null ? undefined : this.roles.get(d.user));
      this.classes.push({ keys, isUser: !tagged && d.user !== null, members: [] });
      for (const k of keys) {
        const list = this.classesByKey.get(k);
        if (list) list.push(c);
        else this.classesByKey.set(k, [c]);
      }
    }
    this.classOf[i] = c;
    let own = EMPTY;
    let served: Prefix[] = NO_PREFIXES;
    let exits = 0;
    let exitsServing = 0;
    for (const text of d.routes) {
      const p = parsePrefix(text);
      if (!p.ok) continue;
      if (p.prefix.bits === 0) {
        // A default route is no subnet: with its pair it makes an exit node (below).
        const bit = p.prefix.family === 4 ? 1 : 2;
        exits |= bit;
        if (!d.primaryRoutes || d.primaryRoutes.includes(text)) exitsServing |= bit;
        continue;
      }
      if (served === NO_PREFIXES) served = [];
      served.push(p.prefix);
      if (d.primaryRoutes && !d.primaryRoutes.includes(text)) continue;
      if (own === EMPTY) own = [];
      own.push(this.routes.length);
      this.routes.push({ prefix: p.prefix, text });
    }
    this.routesOf[i] = own;
    this.servedOf[i] = served;
    // Both 0.0.0.0/0 and ::/0.
    this.exitState[i] = exits === 3 ? (exitsServing === 3 ? 2 : 1) : 0;
  }

  /** Policy prefixes holding device `d` by address or served route. */
  prefixesOf(d: number): number[] {
    return this.policy.index.prefixTree.size === 0 ? EMPTY : this.addressMatches().byDevice[d];
  }

  /**
   * Devices a policy prefix holds: addresses inside it, and every router (primary or standby)
   * serving a route overlapping it.
   */
  devicesIn(pid: number): number[] {
    return this.addressMatches().byPrefix[pid];
  }

  /**
   * One pass over every address and route, each looked up in the prefix forest of the policy:
   * which policy prefixes hold each device, and which devices each policy prefix holds. Built on
   * first need, and only when the policy uses addresses at all.
   */
  private addressMatches(): { byPrefix: number[][]; byDevice: number[][] } {
    if (!this.matches) this.matches = this.deriveMatches([], new Int32Array(this.devices.length).fill(-1));
    return this.matches;
  }

  /**
   * The matches of a same-slots derivation: every unchanged slot keeps its own, and a policy
   * prefix's device list is copied only when a changed device leaves or joins it.
   */
  private moveMatches(before: { byPrefix: number[][]; byDevice: number[][] }, from: Int32Array) {
    const byPrefix = before.byPrefix.slice();
    const byDevice = before.byDevice.slice();
    const fresh = this.deriveMatches([], from, true);
    for (let i = 0; i < from.length; i++) {
      if (from[i] >= 0) continue;
      for (const id of byDevice[i] ?? EMPTY) byPrefix[id] = byPrefix[id].filter((x) => x !== i);
      byDevice[i] = fresh.byDevice[i];
      for (const id of byDevice[i]) byPrefix[id] = [...byPrefix[id], i].sort((a, b) => a - b);
    }
    return { byPrefix, byDevice };
  }

  /** The matches of each device: copied from `before` where `from` names one, else looked up. */
  private deriveMatches(
    before: readonly number[][],
    from: Int32Array,
    /** Look up only the slots `from` does not name (the others are left out). */
    changedOnly = false,
  ): { byPrefix: number[][]; byDevice: number[][] } {
    const { prefixTree, prefixes } = this.policy.index;
    const byPrefix: number[][] = prefixes.map(() => []);
    const byDevice: number[][] = new Array(this.devices.length);
    const ids: number[] = [];
    // Most policies name IPv4 prefixes only: then IPv6 addresses need not even be parsed.
    const v4 = prefixes.some((p) => p.family === 4);
    const v6 = prefixes.some((p) => p.family === 6);
    // Prefixes that are one IPv6 address name no device by its own address (see isLoneV6).
    const lone = prefixes.some(isLoneV6) ? prefixes.map(isLoneV6) : null;
    for (let i = 0; i < this.devices.length; i++) {
      if (changedOnly && from[i] >= 0) continue;
      let unique = from[i] >= 0 ? before[from[i]] : undefined;
      if (unique === undefined) {
        ids.length = 0;
        for (const a of this.devices[i].addresses) {
          const six = a.includes(':');
          if (!(six ? v6 : v4)) continue;
          const key = addressKey(a);
          if (!key) continue;
          const from = ids.length;
          prefixTree.overlapping({ start: key, end: key }, ids);
          if (six && lone) {
            let kept = from;
            for (let k = from; k < ids.length; k++) if (!lone[ids[k]]) ids[kept++] = ids[k];
            ids.length = kept;
          }
        }
        for (const p of this.servedOf[i]) prefixTree.overlapping(p, ids);
        unique = ids.length === 0 ? EMPTY : ids.length === 1 ? [ids[0]] : [...new Set(ids)];
      }
      byDevice[i] = unique;
      for (const id of unique) byPrefix[id].push(i);
    }
    return { byPrefix, byDevice };
  }
}

// The devices of a network as the policy sees them: identity classes (devices with the same
// tags, or the same user, are indistinguishable to every selector except addresses), the
// routes each device serves, and which address prefixes of the policy hold each device.

import { addressKey, type Prefix, parsePrefix } from './cidr.js';
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
 */
export interface DerivedFrom {
  index: DeviceIndex;
  from: Int32Array;
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
  /** Principal key → the classes that carry it. */
  readonly keyClasses: Map<string, number[]>;
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
  private readonly userClasses: Map<string, number>;
  private readonly tagClasses: Map<string, number>;
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
    this.classes = prev ? prev.classes.map((c) => ({ keys: c.keys, isUser: c.isUser, members: [] })) : [];
    this.keyClasses = new Map(prev ? [...prev.keyClasses].map(([k, list]) => [k, [...list]]) : []);
    this.userClasses = new Map(prev?.userClasses);
    this.tagClasses = new Map(prev?.tagClasses);
    this.noneClass = prev ? prev.noneClass : -1;
    this.routes = prev ? prev.routes.slice() : [];
    this.firstNewClass = this.classes.length;
    this.classOf = new Int32Array(n);
    this.routesOf = new Array(n);
    this.servedOf = new Array(n);
    this.exitState = new Uint8Array(n);
    for (let i = 0; i < n; i++) {
      const j = derived ? derived.from[i] : -1;
      if (j >= 0 && prev) {
        this.classOf[i] = prev.classOf[j];
        this.routesOf[i] = prev.routesOf[j];
        this.servedOf[i] = prev.servedOf[j];
        this.exitState[i] = prev.exitState[j];
      } else this.place(i);
      this.classes[this.classOf[i]].members.push(i);
      if (this.exitState[i] > 0) this.exitNodes.push(i);
    }
    if (prev?.matches && derived) this.matches = this.deriveMatches(prev.matches.byDevice, derived.from);
  }

  /** Works out device i's class, routes and exit state. */
  private place(i: number): void {
    const d = this.devices[i];
    const tagged = d.tags.length > 0;
    const map = tagged ? this.tagClasses : this.userClasses;
    const classKey = tagged ? (d.tags.length === 1 ? d.tags[0] : [...d.tags].sort().join(' ')) : d.user;
    let c = classKey === null ? this.noneClass : map.get(classKey);
    if (c === undefined || c < 0) {
      c = this.classes.length;
      if (classKey === null) this.noneClass = c;
      else map.set(classKey, c);
      const keys = identityKeys(this.policy, d, d.user === null ? undefined : this.roles.get(d.user));
      this.classes.push({ keys, isUser: !tagged && d.user !== null, members: [] });
      for (const k of keys) {
        const list = this.keyClasses.get(k);
        if (list) list.push(c);
        else this.keyClasses.set(k, [c]);
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

  /** The matches of each device: copied from `before` where `from` names one, else looked up. */
  private deriveMatches(before: readonly number[][], from: Int32Array): { byPrefix: number[][]; byDevice: number[][] } {
    const { prefixTree, prefixes } = this.policy.index;
    const byPrefix: number[][] = prefixes.map(() => []);
    const byDevice: number[][] = new Array(this.devices.length);
    const ids: number[] = [];
    // Most policies name IPv4 prefixes only: then IPv6 addresses need not even be parsed.
    const v4 = prefixes.some((p) => p.family === 4);
    const v6 = prefixes.some((p) => p.family === 6);
    for (let i = 0; i < this.devices.length; i++) {
      let unique = from[i] >= 0 ? before[from[i]] : undefined;
      if (unique === undefined) {
        ids.length = 0;
        for (const a of this.devices[i].addresses) {
          if (!(a.includes(':') ? v6 : v4)) continue;
          const key = addressKey(a);
          if (key) prefixTree.overlapping({ start: key, end: key }, ids);
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

// Peer maps: for each device, the devices it may reach or be reached by, with the addresses
// and routes to put in allowedIPs.
//
// Pairwise evaluation is quadratic. Instead, reachability is worked out once per identity
// class (see device-index.ts) from the rules that name the class (inverted indexes built by
// compile.ts), as a set of peer classes plus a set of policy address prefixes; a device's peer
// list expands those when it is asked for, adding the rules that hold the device by address.
// Nothing of size devices² is stored: the per-class sets are bounded by classes × rules.
//
// Words used below, all numbers rather than objects so the hot loops stay on typed arrays:
//  - a device's *slot*: its index in the `devices` array the map was made for;
//  - a *class*: an identity class of device-index.ts (devices the policy cannot tell apart:
//    the same tags, or the same owner with the same groups and role), by its index;
//  - a *prefix*: an address prefix the policy names, by its index in policy.index.prefixes;
//  - a *rule*: a compiled rule, by its index in policy.rules;
//  - a class's *reach* (Reach): the classes and prefixes on the other side of its rules;
//  - the *viewer* (Viewer): the device whose peers are listed, with what it adds to its
//    class's reach (rules that hold it by address, use of exit nodes).

import { overlaps } from './cidr.js';
import { unionOfRules } from './compile.js';
import { type DerivedFrom, DeviceIndex } from './device-index.js';
import type { CompiledPolicy, CompiledRule, PeerView, PolicyDevice, PolicyUser } from './types.js';

/** What a device in service as an exit node adds to the allowedIPs of those who may use it. */
const EXIT_ROUTES = Object.freeze(['0.0.0.0/0', '::/0']);

/** What the members of one class may reach or be reached by. */
interface Reach {
  /** Every device is a peer. */
  all: boolean;
  classes: number[];
  prefixes: number[];
  /** Rules with the viewer in src / in dst (port-blind). */
  outRules: number[];
  inRules: number[];
  /** Some rule lets the viewer reach the internet: exit nodes are its peers. */
  internet: boolean;
}

/** The device whose peers are listed, as the queries below need it. */
interface Viewer {
  /** Its identity class. */
  classIndex: number;
  /** Rules that hold this device through an address or route of its own, not its identity. */
  extra: { out: number[]; in: number[] } | null;
  /** May use exit nodes: their default routes go into its allowedIPs. */
  internet: boolean;
}

/**
 * Routes a derived map may carry before it should be built anew: route numbers are never
 * reused across derivations (so per-route caches stay valid), so a router that keeps going
 * offline and coming back adds a few each time.
 */
const MAX_CARRIED_ROUTES = 8_192;

/** An earlier map of the same policy a new one is derived from (see DerivedFrom). */
export interface PeerMapDerivation extends Omit<DerivedFrom, 'index'> {
  map: PeerMap;
}

export class PeerMap {
  private readonly rules: readonly CompiledRule[];
  private readonly index: DeviceIndex;
  /**
   * Device id → index: the caller's when it keeps one, else built on the second query (one
   * netmap from a fresh map just scans).
   */
  private byId: Pick<ReadonlyMap<string, number>, 'get'> | null;
  private queries = 0;
  private readonly reach: Array<Reach | undefined>;
  /** Per class: route index → whether members of the class get that route in allowedIPs. */
  private readonly routeVisible: Array<Map<number, boolean> | undefined>;
  private readonly views: Array<PeerView | undefined>;
  // Scratch space reused by every query; fresh stamps avoid clearing it.
  private readonly mark: Int32Array;
  private readonly classMark: Int32Array;
  private readonly prefixMark: Int32Array;
  private stamp = 0;
  private readonly buf: Int32Array;
  private internetList: number[] | null = null;

  /**
   * With `derived`, the map is made from an earlier one of the same policy (see DerivedFrom):
   * the devices `from` names are unchanged, and what the earlier map worked out per identity
   * class and per route still holds, so only the changed devices are placed again and only
   * the reach of classes that the new classes join is extended. `byId`: the caller's own index
   * of `devices` by id, if it keeps one.
   */
  constructor(
    private readonly policy: CompiledPolicy,
    private readonly devices: readonly PolicyDevice[],
    users: readonly PolicyUser[],
    options: { derived?: PeerMapDerivation; byId?: Pick<ReadonlyMap<string, number>, 'get'> } = {},
  ) {
    const { derived } = options;
    this.rules = policy.rules;
    this.byId = options.byId ?? null;
    this.index = new DeviceIndex(policy, devices, users, derived && { ...derived, index: derived.map.index });
    const classes = this.index.classes.length;
    this.reach = new Array(classes);
    this.routeVisible = new Array(classes);
    this.views = derived?.sameSlots ? derived.map.views.slice() : new Array(devices.length);
    if (derived) this.carryOver(derived.map, derived.from);
    this.mark = new Int32Array(devices.length);
    this.classMark = new Int32Array(classes);
    this.prefixMark = new Int32Array(policy.index.prefixes.length);
    this.buf = new Int32Array(devices.length);
  }

  /**
   * Keeps what `prev` worked out that does not depend on the changed devices: the reach of each
   * class (extended by the classes new here that it names), which routes each class may use
   * (route numbers are stable), and the shared views of unchanged devices.
   */
  private carryOver(prev: PeerMap, from: Int32Array): void {
    for (let i = 0; i < from.length; i++)
      if (from[i] !== i) this.views[i] = from[i] >= 0 ? prev.views[from[i]] : undefined;
    for (let cls = 0; cls < prev.routeVisible.length; cls++) this.routeVisible[cls] = prev.routeVisible[cls];
    const added = this.index.classes.slice(this.index.firstNewClass);
    for (let cls = 0; cls < prev.reach.length; cls++) {
      const r = prev.reach[cls];
      if (!r || r.all || added.length === 0) {
        this.reach[cls] = r;
        continue;
      }
      const joined: number[] = [];
      for (let k = 0; k < added.length; k++) {
        const keys = new Set(added[k].keys);
        const named =
          r.outRules.some((rule) => this.rules[rule].dstKeys.some((key) => keys.has(key))) ||
          r.inRules.some((rule) => this.rules[rule].srcKeys.some((key) => keys.has(key)));
        if (named) joined.push(this.index.firstNewClass + k);
      }
      this.reach[cls] = joined.length ? { ...r, classes: [...r.classes, ...joined] } : r;
    }
  }

  /** Whether a new map may be derived from this one (else build one anew). */
  get derivable(): boolean {
    return this.index.routes.length <= MAX_CARRIED_ROUTES;
  }

  /** The peers of a device, in the order of the devices array; [] for an unknown id. */
  peers(deviceId: string): PeerView[] {
    const self = this.indexOf(deviceId);
    if (self < 0) return [];
    const selfClass = this.index.classOf[self];
    const reach = this.reachOf(selfClass);
    const extra = this.addressRules(self);
    let all = reach.all;
    let extraReach: Reach | null = null;
    const isUser = this.index.classes[selfClass].isUser;
    let internet = reach.internet;
    if (extra && !all) {
      extraReach = this.gather(extra.out, extra.in, isUser ? selfClass : -1);
      all = extraReach.all;
      internet ||= extraReach.internet;
    } else if (extra && !internet) internet = this.usesInternet(extra.out);
    const viewer: Viewer = { classIndex: selfClass, extra, internet };
    const out: PeerView[] = [];
    const n = this.devices.length;
    if (all) {
      for (let i = 0; i < n; i++) if (i !== self) out.push(this.view(viewer, i));
      return out;
    }
    const stamp = ++this.stamp;
    const { mark, buf } = this;
    mark[self] = stamp;
    let count = 0;
    const add = (list: number[]) => {
      for (const i of list) {
        if (mark[i] !== stamp) {
          mark[i] = stamp;
          buf[count++] = i;
        }
      }
    };
    for (const r of extraReach ? [reach, extraReach] : [reach]) {
      for (const pc of r.classes) add(this.index.classes[pc].members);
      for (const pid of r.prefixes) add(this.index.devicesIn(pid));
    }
    // Exit nodes and the devices that may use them see each other.
    if (internet) add(this.index.exitNodes);
    if (this.index.exitState[self] > 0) add(this.internetUsers());
    // autogroup:self reached from a source held by address: the viewer's own class members that
    // the source holds reach the viewer (the forward direction is gather's selfClass).
    if (isUser) {
      for (const r of this.policy.index.selfPrefixRules) {
        for (const pid of this.rules[r].srcPrefixes)
          add(this.index.devicesIn(pid).filter((i) => this.index.classOf[i] === selfClass));
      }
    }
    // Sorting k peers costs about k·log k, scanning the marks n: scan only for very long lists.
    if (count * 4 < n) {
      for (const i of buf.subarray(0, count).sort()) out.push(this.view(viewer, i));
    } else {
      for (let i = 0; i < n; i++) if (mark[i] === stamp && i !== self) out.push(this.view(viewer, i));
    }
    return out;
  }

  /**
   * The identity class of a device that sees every other device through its identity alone (a
   * rule reaching `*`, and no rule holding it by address): all members of that class then see
   * each peer alike (classView), which lets a caller summarise their views once per class.
   * Undefined for any other device, whose peers must be listed.
   */
  everyoneClassOf(deviceId: string): number | undefined {
    const slot = this.indexOf(deviceId);
    if (slot < 0) return undefined;
    const cls = this.index.classOf[slot];
    return this.reachOf(cls).all && !this.addressRules(slot) ? cls : undefined;
  }

  /** Device `peer` as a member of class `cls` without address rules sees it (see everyoneClassOf). */
  classView(cls: number, peer: number): PeerView {
    return this.view({ classIndex: cls, extra: null, internet: this.reachOf(cls).internet }, peer);
  }

  private indexOf(deviceId: string): number {
    if (this.byId) return this.byId.get(deviceId) ?? -1;
    if (this.queries++ === 0) return this.devices.findIndex((device) => device.id === deviceId);
    const byId = new Map<string, number>();
    // The first device wins on a duplicate id, as with the scan above.
    for (let i = this.devices.length - 1; i >= 0; i--) byId.set(this.devices[i].id, i);
    this.byId = byId;
    return byId.get(deviceId) ?? -1;
  }

  /** The peer as this viewer sees it; shared frozen objects when no route is involved. */
  private view(viewer: Viewer, peer: number): PeerView {
    const base = this.baseView(peer);
    const own = this.index.routesOf[peer];
    const exit = viewer.internet && this.index.exitState[peer] === 2;
    if (own.length === 0 && !exit) return base;
    const visible = own.filter((r) => this.routeVisibleTo(viewer, r)).map((r) => this.index.routes[r].text);
    if (exit) visible.push(...EXIT_ROUTES);
    if (visible.length === 0) return base;
    return { id: base.id, allowedIPs: [...base.allowedIPs, ...visible] };
  }

  private baseView(i: number): PeerView {
    let v = this.views[i];
    if (!v) {
      const device = this.devices[i];
      const allowedIPs = Object.freeze(device.addresses.map((a) => (a.includes(':') ? `${a}/128` : `${a}/32`)));
      v = Object.freeze({ id: device.id, allowedIPs: allowedIPs as string[] });
      this.views[i] = v;
    }
    return v;
  }

  /**
   * A route reaches the viewer's allowedIPs when the viewer may send into it (a rule with the
   * viewer in src and a dst of `*` or a prefix overlapping it) or traffic from it may reach the
   * viewer (a rule with the viewer in dst and a src of `*` or a prefix overlapping it).
   */
  private routeVisibleTo(viewer: Viewer, route: number): boolean {
    const reach = this.reachOf(viewer.classIndex);
    let cache = this.routeVisible[viewer.classIndex];
    if (!cache) {
      cache = new Map();
      this.routeVisible[viewer.classIndex] = cache;
    }
    let visible = cache.get(route);
    if (visible === undefined) {
      visible = this.routeAllowed(reach.outRules, reach.inRules, route);
      cache.set(route, visible);
    }
    if (visible || !viewer.extra) return visible;
    return this.routeAllowed(viewer.extra.out, viewer.extra.in, route);
  }

  private routeAllowed(outRules: number[], inRules: number[], route: number): boolean {
    const p = this.index.routes[route].prefix;
    const prefixes = this.policy.index.prefixes;
    for (const r of outRules) {
      const rule = this.rules[r];
      if (rule.dstAll || rule.dstPrefixes.some((id) => overlaps(prefixes[id], p))) return true;
    }
    for (const r of inRules) {
      const rule = this.rules[r];
      if (rule.srcAll || rule.srcPrefixes.some((id) => overlaps(prefixes[id], p))) return true;
    }
    return false;
  }

  private reachOf(cls: number): Reach {
    let r = this.reach[cls];
    if (!r) {
      const idx = this.policy.index;
      const { keys, isUser } = this.index.classes[cls];
      const out = unionOfRules([idx.allSrcRules, ...keys.map((k) => idx.keySrcRules.get(k))]);
      const inn = unionOfRules([idx.allDstRules, ...keys.map((k) => idx.keyDstRules.get(k))]);
      r = this.gather(out, inn, isUser ? cls : -1);
      this.reach[cls] = r;
    }
    return r;
  }

  /** Peer classes and prefixes on the other side of each rule: dst of outRules, src of inRules. */
  private gather(outRules: number[], inRules: number[], selfClass: number): Reach {
    const { rules, classMark, prefixMark } = this;
    const reach: Reach = {
      all: false,
      classes: [],
      prefixes: [],
      outRules,
      inRules,
      internet: this.usesInternet(outRules),
    };
    if (outRules.some((r) => rules[r].dstAll) || inRules.some((r) => rules[r].srcAll)) {
      reach.all = true;
      return reach;
    }
    const stamp = ++this.stamp;
    const addClass = (pc: number) => {
      if (classMark[pc] !== stamp) {
        classMark[pc] = stamp;
        reach.classes.push(pc);
      }
    };
    const addSide = (keys: string[], prefixes: number[]) => {
      for (const k of keys) for (const pc of this.index.keyClasses.get(k) ?? []) addClass(pc);
      for (const id of prefixes) {
        if (prefixMark[id] !== stamp) {
          prefixMark[id] = stamp;
          reach.prefixes.push(id);
        }
      }
    };
    for (const r of outRules) {
      addSide(rules[r].dstKeys, rules[r].dstPrefixes);
      // autogroup:self: the same user's devices, i.e. the viewer's own class.
      if (rules[r].dstSelf && selfClass >= 0) addClass(selfClass);
    }
    for (const r of inRules) addSide(rules[r].srcKeys, rules[r].srcPrefixes);
    return reach;
  }

  private usesInternet(outRules: number[]): boolean {
    return outRules.some((r) => this.rules[r].dstInternet);
  }

  /**
   * Devices that may use exit nodes (by identity or by address), ascending: the peers an exit
   * node gains. Made once per map, on the first exit node's query.
   */
  private internetUsers(): number[] {
    if (!this.internetList) {
      const list: number[] = [];
      for (let i = 0; i < this.devices.length; i++) {
        let internet = this.reachOf(this.index.classOf[i]).internet;
        const extra = internet ? null : this.addressRules(i);
        if (extra) internet = this.usesInternet(extra.out);
        if (internet) list.push(i);
      }
      this.internetList = list;
    }
    return this.internetList;
  }

  /** Rules whose src / dst holds this device by address or served route; null when none. */
  private addressRules(slot: number): Viewer['extra'] {
    const ids = this.index.prefixesOf(slot);
    if (ids.length === 0) return null;
    const { prefixSrcRules, prefixDstRules } = this.policy.index;
    const out = unionOfRules(ids.map((id) => prefixSrcRules[id]));
    const inn = unionOfRules(ids.map((id) => prefixDstRules[id]));
    return out.length + inn.length > 0 ? { out, in: inn } : null;
  }
}

/** Every device's peer list, computed on demand (see PeerMap). */
export function computePeerMaps(
  policy: CompiledPolicy,
  devices: readonly PolicyDevice[],
  users: readonly PolicyUser[],
): (deviceId: string) => PeerView[] {
  const map = new PeerMap(policy, devices, users);
  return (deviceId) => map.peers(deviceId);
}

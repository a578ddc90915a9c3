// A subject is what selectors are matched against: a real device, or the abstract device a
// policy test talks about. Identity is reduced to principal keys (`u:login`, `g:group`, `t:tag`,
// `a:member`, `a:tagged`, `a:admin`, the same keys selectorKey gives), so matching a selector is
// one set lookup, and two devices with the same keys are indistinguishable to the policy.

import { addressKey, containsPrefix, isLoneV6, type KeyRange, overlaps, parsePrefix } from './cidr.js';
import { unionOfRules } from './compile.js';
import { ALL_PORTS, type PortRanges, portAllowed } from './ports.js';
import { hasPorts, protoAllowed } from './protocols.js';
import { selectorKey } from './selectors.js';
import type { CompiledDst, CompiledPolicy, CompiledRule, PolicyDevice, PolicyUser, Selector } from './types.js';

/** A subject's range; `ownV6` marks a device's own IPv6 address (see isLoneV6). */
export interface SubjectRange extends KeyRange {
  ownV6?: true;
}

export interface Subject {
  keys: ReadonlySet<string>;
  /** Owner identity for autogroup:self: the login of an untagged device, else null. */
  owner: string | null;
  /** Addresses (single-key ranges) and served routes: what IP and CIDR selectors look at. */
  ranges: readonly SubjectRange[];
  /**
   * An address on the internet, which autogroup:internet holds: only a test's target is one (a
   * device or a router never is, so peers and canReach are unchanged).
   */
  internet?: true;
}

/**
 * How a prefix selector meets a subject's ranges. `overlap`: some address in common (devices,
 * and "could any traffic match?"). `cover`: the selector holds a whole range ("does all traffic
 * match?"), which a test with a CIDR needs before it may claim "accept".
 */
export type MatchMode = 'overlap' | 'cover';

/** Roles that autogroup:admin stands for. */
export const ADMIN_ROLES: ReadonlySet<string> = new Set(['owner', 'admin']);

/** The principal keys of a device's identity: its tags alone if it has any, else its user. */
export function identityKeys(
  policy: CompiledPolicy,
  device: Pick<PolicyDevice, 'user' | 'tags'>,
  role: string | undefined,
): string[] {
  const { tagKeys, userKeys } = policy.index;
  if (device.tags.length > 0) {
    const keys = ['a:tagged'];
    for (const t of device.tags) {
      const key = tagKeys.get(t);
      if (key !== undefined) keys.push(key);
    }
    return keys;
  }
  if (device.user === null) return [];
  const keys = ['a:member'];
  const own = userKeys.get(device.user);
  if (own) keys.push(...own);
  if (role !== undefined && ADMIN_ROLES.has(role)) keys.push('a:admin');
  return keys;
}

const roleCache = new WeakMap<readonly PolicyUser[], Map<string, string>>();

/** Login → role, cached per users array (callers pass the same array to many calls). */
export function roleMap(users: readonly PolicyUser[]): Map<string, string> {
  let map = roleCache.get(users);
  if (!map) {
    map = new Map(users.map((u) => [u.login, u.role]));
    roleCache.set(users, map);
  }
  return map;
}

/**
 * A device's ranges: each parseable address as a single key, each parseable subnet route it
 * serves (primary or standby). Exit routes are not subnets: autogroup:internet stands for them.
 */
function deviceRanges(device: Pick<PolicyDevice, 'addresses' | 'routes'>): SubjectRange[] {
  const out: SubjectRange[] = [];
  for (const a of device.addresses) {
    const key = addressKey(a);
    if (key) out.push(a.includes(':') ? { start: key, end: key, ownV6: true } : { start: key, end: key });
  }
  for (const r of device.routes) {
    const p = parsePrefix(r);
    if (p.ok && p.prefix.bits > 0) out.push(p.prefix);
  }
  return out;
}

export function deviceSubject(policy: CompiledPolicy, device: PolicyDevice, roles: Map<string, string>): Subject {
  const role = device.user === null ? undefined : roles.get(device.user);
  return {
    keys: new Set(identityKeys(policy, device, role)),
    owner: device.tags.length === 0 ? device.user : null,
    ranges: deviceRanges(device),
  };
}

export function matchesSelector(sel: Selector, s: Subject, mode: MatchMode): boolean {
  if (sel.kind === 'all') return true;
  if (sel.kind === 'internet') return s.internet === true;
  if (sel.kind === 'prefix') {
    const test = mode === 'cover' ? containsPrefix : overlaps;
    const lone = isLoneV6(sel.prefix);
    return s.ranges.some((r) => !(lone && r.ownV6) && test(sel.prefix, r));
  }
  const key = selectorKey(sel);
  return key !== null && s.keys.has(key);
}

/**
 * The rules whose src could hold the subject (by `*`, a principal key, or an overlapping
 * prefix), in policy order: a superset that ruleAccepts then decides on, found through the
 * compiled indexes instead of a scan of every rule.
 */
export function candidateRules(policy: CompiledPolicy, src: Subject): number[] {
  const idx = policy.index;
  const lists: Array<readonly number[] | undefined> = [idx.allSrcRules];
  for (const k of src.keys) lists.push(idx.keySrcRules.get(k));
  if (src.ranges.length > 0 && idx.prefixTree.size > 0) {
    const ids: number[] = [];
    for (const r of src.ranges) idx.prefixTree.overlapping(r, ids);
    for (const id of ids) lists.push(idx.prefixSrcRules[id]);
  }
  return unionOfRules(lists);
}

/** Whether a destination entry holds dst for traffic from src (ports aside). */
function dstHolds(d: CompiledDst, src: Subject, dst: Subject, mode: MatchMode): boolean {
  if (d.sel.kind === 'self') return src.owner !== null && src.owner === dst.owner;
  return matchesSelector(d.sel, dst, mode);
}

/**
 * A rule's selectors indexed by principal key, for rules too long to scan: a rule naming 30,000
 * logins is asked about once per test subject, and a scan each time made that quadratic. Built
 * on first use and kept with the rule.
 */
interface RuleIndexBySide {
  srcAll: boolean;
  srcKeys: ReadonlySet<string>;
  /** Sources matched otherwise than by key (prefixes). */
  srcOther: readonly Selector[];
  dstByKey: ReadonlyMap<string, CompiledDst[]>;
  /** Destinations matched otherwise than by key (`*`, prefixes, autogroup:self). */
  dstOther: readonly CompiledDst[];
}

/** Below this many selectors a scan is cheaper than building and keeping an index. */
const SCAN_LIMIT = 16;
const ruleIndexes = new WeakMap<CompiledRule, RuleIndexBySide>();

function indexOf(rule: CompiledRule): RuleIndexBySide {
  let index = ruleIndexes.get(rule);
  if (index) return index;
  const srcKeys = new Set<string>();
  const srcOther: Selector[] = [];
  let srcAll = false;
  for (const sel of rule.src) {
    const key = selectorKey(sel);
    if (sel.kind === 'all') srcAll = true;
    else if (key !== null) srcKeys.add(key);
    else srcOther.push(sel);
  }
  const dstByKey = new Map<string, CompiledDst[]>();
  const dstOther: CompiledDst[] = [];
  for (const d of rule.dst) {
    const key = selectorKey(d.sel);
    if (key === null) dstOther.push(d);
    else {
      const list = dstByKey.get(key);
      if (list) list.push(d);
      else dstByKey.set(key, [d]);
    }
  }
  index = { srcAll, srcKeys, srcOther, dstByKey, dstOther };
  ruleIndexes.set(rule, index);
  return index;
}

/** Whether the rule's sources hold src. */
function srcHolds(rule: CompiledRule, src: Subject, mode: MatchMode): boolean {
  if (rule.src.length <= SCAN_LIMIT) return rule.src.some((sel) => matchesSelector(sel, src, mode));
  const index = indexOf(rule);
  if (index.srcAll) return true;
  for (const key of src.keys) if (index.srcKeys.has(key)) return true;
  return index.srcOther.some((sel) => matchesSelector(sel, src, mode));
}

/** The destination entries of the rule that could hold dst: all of them, or those its keys name. */
function dstCandidates(rule: CompiledRule, dst: Subject): Iterable<CompiledDst> {
  if (rule.dst.length <= SCAN_LIMIT) return rule.dst;
  const index = indexOf(rule);
  const out: CompiledDst[] = [...index.dstOther];
  for (const key of dst.keys) {
    const list = index.dstByKey.get(key);
    if (list) for (const d of list) out.push(d);
  }
  return out;
}

/**
 * The ports of dst that `rule` opens to src for protocol `proto` (an IANA number): the ranges
 * of every destination entry holding dst, or every port for a protocol without ports.
 */
export function rulePorts(
  rule: CompiledRule,
  src: Subject,
  dst: Subject,
  proto: number,
  mode: MatchMode,
): PortRanges[] {
  const out: PortRanges[] = [];
  if (!srcHolds(rule, src, mode)) return out;
  for (const d of dstCandidates(rule, dst)) {
    if (protoAllowed(d.protos, proto) && dstHolds(d, src, dst, mode)) out.push(hasPorts(proto) ? d.ports : ALL_PORTS);
  }
  return out;
}

/** Whether `rule` lets src send `proto` traffic to dst's `port` (protocols without ports ignore it). */
export function ruleAccepts(
  rule: CompiledRule,
  src: Subject,
  dst: Subject,
  port: number,
  proto: number,
  mode: MatchMode,
): boolean {
  if (!srcHolds(rule, src, mode)) return false;
  for (const d of dstCandidates(rule, dst)) {
    if (!protoAllowed(d.protos, proto)) continue;
    if (hasPorts(proto) && !portAllowed(d.ports, port)) continue;
    if (dstHolds(d, src, dst, mode)) return true;
  }
  return false;
}

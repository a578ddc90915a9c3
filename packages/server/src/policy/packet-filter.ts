// The packet filter one device enforces, in the shape of Tailscale's tailcfg.FilterRule: for
// each rule with a destination holding the device, the sources it admits (addresses of the
// devices the rule's src selects, prefixes as written, `*` for everyone) and the destinations
// on the device it opens (its own addresses, the prefixes it routes, `*`), with their ports and
// protocols. Rules that open nothing on the device are left out, as Tailscale's control plane
// reduces filters per node. The same matching as peers and canReach (subjects.ts) decides.
// A grant's `app` capabilities become a rule of their own, with the same sources and a CapGrant
// naming the device's addresses (or the prefixes it routes) and the capabilities: the client
// reads them as what those sources may do on it (`tailscale whois`, its apps' peer capabilities).
//
// Only the rules whose dst can name the device are looked at, found through the compiled
// indexes (compile.ts): a policy with a rule per group of devices costs each device the few
// rules of its groups, not the whole policy, so a policy change costs the fleet O(devices)
// rather than O(devices × rules).

import { innerMap } from '../lib/nested-maps.js';
import { containsPrefix, isLoneV6, overlaps, parsePrefix } from './cidr.js';
import { unionOfRules } from './compile.js';
import { candidateRules, deviceSubject, matchesSelector, roleMap, type Subject } from './subjects.js';
import type {
  AppCapabilities,
  CompiledDst,
  CompiledPolicy,
  CompiledRule,
  PolicyDevice,
  PolicyUser,
  Selector,
} from './types.js';

export interface FilterPortRange {
  First: number;
  Last: number;
}

/** tailcfg.CapGrant: capabilities the rule's sources have on these destinations (prefixes). */
export interface FilterCapGrant {
  Dsts: string[];
  /** null: a capability without values (the companions the server adds). */
  CapMap: Readonly<Record<string, readonly unknown[] | null>>;
}

export interface PortsRule {
  SrcIPs: string[];
  DstPorts: Array<{ IP: string; Ports: FilterPortRange }>;
  /** Absent: Tailscale's default (TCP, UDP, ICMP and ICMPv6). */
  IPProto?: number[];
}

/** A rule has either DstPorts or CapGrant, never both (as tailcfg.FilterRule). */
export type FilterRule = PortsRule | { SrcIPs: string[]; CapGrant: FilterCapGrant[] };

/** A device's addresses as filter text: a single address without its length. */
export const bare = (address: string): string => address.replace(/\/(32|128)$/, '');

function sourcesOf(
  src: readonly Selector[],
  subjects: ReadonlyArray<{ device: PolicyDevice; subject: Subject }>,
  onlyOwner: string | null | undefined,
): string[] {
  const out = new Set<string>();
  for (const sel of src) {
    if (onlyOwner === undefined && sel.kind === 'all') return ['*'];
    if (onlyOwner === undefined && sel.kind === 'prefix') {
      out.add(sel.prefix.text);
      continue;
    }
    for (const { device, subject } of subjects) {
      if (onlyOwner !== undefined && (onlyOwner === null || subject.owner !== onlyOwner)) continue;
      if (matchesSelector(sel, subject, 'overlap')) for (const a of device.addresses) out.add(bare(a));
    }
  }
  return [...out].sort();
}

/** The destinations on the viewer (whose addresses as filter IPs are `own`) that one dst entry opens. */
function destinationsOf(d: CompiledDst, own: readonly string[], subject: Subject): readonly string[] {
  if (d.sel.kind === 'all') return ['*'];
  if (d.sel.kind === 'internet') return [];
  if (d.sel.kind === 'prefix') return matchesSelector(d.sel, subject, 'overlap') ? [d.sel.prefix.text] : [];
  if (d.sel.kind === 'self') return subject.owner === null ? [] : own;
  return matchesSelector(d.sel, subject, 'overlap') ? own : [];
}

/** A prefix as tailcfg wants it in CapGrant.Dsts (netip.Prefix): always with its length. */
const withLength = (sel: Selector & { kind: 'prefix' }): string =>
  sel.prefix.text.includes('/') ? sel.prefix.text : `${sel.prefix.text}/${sel.prefix.family === 4 ? 32 : 128}`;

/**
 * The CapGrant destinations on the viewer (its prefixes `own`) that one dst entry names. A prefix
 * is narrowed to the viewer's addresses inside it, and kept whole where it meets a route the
 * viewer serves, as Headscale reduces a CapGrant per node.
 */
function capDestinationsOf(d: CompiledDst, own: readonly string[], subject: Subject): readonly string[] {
  if (d.sel.kind === 'prefix') {
    if (!matchesSelector(d.sel, subject, 'overlap')) return [];
    const sel = d.sel;
    // A single IPv6 address names no device by its own address (subjects.ts): routes only.
    const lone = isLoneV6(sel.prefix);
    const out = own.filter((p) => {
      const r = parsePrefix(p);
      return r.ok && !(lone && r.prefix.family === 6) && containsPrefix(sel.prefix, r.prefix);
    });
    // A subject's routes are its prefixes (with their text); its addresses are bare ranges.
    if (subject.ranges.some((r) => 'text' in r && overlaps(sel.prefix, r))) out.push(withLength(sel));
    return out;
  }
  // `*` names the device itself here: a CapGrant's destinations are prefixes, never `*`.
  if (d.sel.kind === 'all') return own;
  return destinationsOf(d, own, subject);
}

/**
 * The CapGrant rules of a grant with `app` on the viewer: one for the entries naming it through
 * autogroup:self (sources of its owner only) and one for the others, as for DstPorts.
 */
function capGrantRules(
  rule: CompiledRule,
  app: AppCapabilities,
  ownPrefixes: readonly string[],
  viewerSubject: Subject,
  inMap: ReadonlyArray<{ device: PolicyDevice; subject: Subject }>,
): FilterRule[] {
  const bySelf = new Map<boolean, Set<string>>();
  for (const d of rule.dst) {
    const dsts = capDestinationsOf(d, ownPrefixes, viewerSubject);
    if (dsts.length === 0) continue;
    const self = d.sel.kind === 'self';
    let set = bySelf.get(self);
    if (!set) {
      set = new Set();
      bySelf.set(self, set);
    }
    for (const dst of dsts) set.add(dst);
  }
  const out: FilterRule[] = [];
  for (const [self, dsts] of bySelf) {
    const srcIPs = sourcesOf(rule.src, inMap, self ? viewerSubject.owner : undefined);
    if (srcIPs.length > 0) out.push({ SrcIPs: srcIPs, CapGrant: [{ Dsts: [...dsts], CapMap: app }] });
  }
  return out;
}

/**
 * Capabilities whose grant Tailscale's control server answers with a companion the other way:
 * the sources learn that the destinations share drives (Taildrive) or serve as relays, from a
 * rule with the destinations' addresses and a CapGrant naming the source (as Headscale does).
 */
const COMPANIONS: ReadonlyArray<readonly [string, string]> = [
  ['tailscale.com/cap/drive', 'tailscale.com/cap/drive-sharer'],
  ['tailscale.com/cap/relay', 'tailscale.com/cap/relay-target'],
];

/** Per policy, whether a grant has a capability with a companion: most have none, and pay nothing. */
const hasCompanions = new WeakMap<CompiledPolicy, boolean>();

function companionsIn(policy: CompiledPolicy): boolean {
  let has = hasCompanions.get(policy);
  if (has === undefined) {
    has = policy.rules.some((r) => r.app && COMPANIONS.some(([cap]) => cap in (r.app as AppCapabilities)));
    hasCompanions.set(policy, has);
  }
  return has;
}

/** The addresses (as SrcIPs) of what one dst entry names, seen from the viewer's map. */
function namedBy(
  d: CompiledDst,
  viewerSubject: Subject,
  inMap: ReadonlyArray<{ device: PolicyDevice; subject: Subject }>,
): string[] {
  if (d.sel.kind === 'all') return ['*'];
  if (d.sel.kind === 'internet') return [];
  if (d.sel.kind === 'prefix') return [d.sel.prefix.text];
  const out: string[] = [];
  for (const { device, subject } of inMap) {
    const named =
      d.sel.kind === 'self'
        ? viewerSubject.owner !== null && subject.owner === viewerSubject.owner
        : matchesSelector(d.sel, subject, 'overlap');
    if (named) for (const a of device.addresses) out.push(bare(a));
  }
  return out;
}

/** The companion rules of the viewer as a source of grants with drive or relay capabilities. */
function companionRules(
  policy: CompiledPolicy,
  viewerSubject: Subject,
  ownPrefixes: readonly string[],
  inMap: ReadonlyArray<{ device: PolicyDevice; subject: Subject }>,
): FilterRule[] {
  const out: FilterRule[] = [];
  for (const at of candidateRules(policy, viewerSubject)) {
    const rule = policy.rules[at];
    if (!rule.app || !rule.src.some((sel) => matchesSelector(sel, viewerSubject, 'overlap'))) continue;
    for (const [cap, companion] of COMPANIONS) {
      if (!(cap in rule.app)) continue;
      const srcIPs = [...new Set(rule.dst.flatMap((d) => namedBy(d, viewerSubject, inMap)))].sort();
      if (srcIPs.length === 0) continue;
      out.push({ SrcIPs: srcIPs, CapGrant: [{ Dsts: [...ownPrefixes], CapMap: { [companion]: null } }] });
    }
  }
  return out;
}

/**
 * The rules whose dst could hold the viewer, in policy order: those with `*`, with one of its
 * principal keys, with autogroup:self when it is a user's device, or with a prefix overlapping
 * one of its addresses or routes. A superset: destinationsOf decides on each entry.
 */
function rulesNaming(policy: CompiledPolicy, viewer: Subject): readonly number[] {
  const idx = policy.index;
  const lists: Array<readonly number[] | undefined> = [idx.allDstRules];
  for (const key of viewer.keys) lists.push(idx.keyDstRules.get(key));
  if (viewer.owner !== null) lists.push(idx.selfDstRules);
  if (viewer.ranges.length > 0 && idx.prefixTree.size > 0) {
    const ids: number[] = [];
    for (const range of viewer.ranges) idx.prefixTree.overlapping(range, ids);
    for (const id of ids) lists.push(idx.prefixDstRules[id]);
  }
  return unionOfRules(lists);
}

/**
 * Subjects of the devices in maps, kept per policy and users (roleMap's map stands for them):
 * a device is in the map of each of its peers, and the caller passes the same device objects
 * (a network view's, never changed once made) to every filter of a change.
 */
const subjects = new WeakMap<CompiledPolicy, WeakMap<Map<string, string>, WeakMap<PolicyDevice, Subject>>>();

export function subjectOf(policy: CompiledPolicy, roles: Map<string, string>, device: PolicyDevice): Subject {
  const byDevice = innerMap(innerMap(subjects, policy, WeakMap), roles, WeakMap);
  let subject = byDevice.get(device);
  if (!subject) {
    subject = deviceSubject(policy, device, roles);
    byDevice.set(device, subject);
  }
  return subject;
}

export function packetFilter(
  policy: CompiledPolicy,
  viewer: PolicyDevice,
  devices: readonly PolicyDevice[],
  users: readonly PolicyUser[],
): FilterRule[] {
  const roles = roleMap(users);
  // The viewer is usually also in `devices` (its own map holds it): one subject for both.
  const own = viewer.addresses.map(bare);
  return filterRules(policy, roles, subjectOf(policy, roles, viewer), own, prefixesOf(own, viewer), devices);
}

/** The viewer's addresses `own` (as filter IPs, or their placeholders) with their lengths. */
const prefixesOf = (own: readonly string[], viewer: PolicyDevice): string[] =>
  own.map((ip, k) => ip + lengthOf(viewer.addresses[k]));

/** `/32` or `/128`: an address's length as written, or as its family has it. */
const lengthOf = (address: string): string => {
  const slash = address.indexOf('/');
  if (slash >= 0) return address.slice(slash);
  return address.includes(':') ? '/128' : '/32';
};

/**
 * The filter of a viewer whose subject is `viewerSubject` and whose addresses as filter IPs are
 * `own` (as prefixes, `ownPrefixes`).
 */
function filterRules(
  policy: CompiledPolicy,
  roles: Map<string, string>,
  viewerSubject: Subject,
  own: readonly string[],
  ownPrefixes: readonly string[],
  devices: readonly PolicyDevice[],
): FilterRule[] {
  const candidates = rulesNaming(policy, viewerSubject);
  const companions = companionsIn(policy);
  if (candidates.length === 0 && !companions) return [];
  const inMap = devices.map((device) => ({ device, subject: subjectOf(policy, roles, device) }));
  const rules: FilterRule[] = [];
  for (const at of candidates) {
    const rule = policy.rules[at];
    // Entries are grouped by (self or not, protocols): each group is one FilterRule.
    const groups = new Map<string, { self: boolean; protos: readonly number[] | null; dst: PortsRule['DstPorts'] }>();
    for (const d of rule.dst) {
      // An `app` grant's own entries (no protocol) open nothing: its CapGrant rules follow.
      if (d.protos?.length === 0) continue;
      const ips = destinationsOf(d, own, viewerSubject);
      if (ips.length === 0) continue;
      const self = d.sel.kind === 'self';
      const key = `${self}|${d.protos?.join(',') ?? '*'}`;
      let group = groups.get(key);
      if (!group) {
        group = { self, protos: d.protos, dst: [] };
        groups.set(key, group);
      }
      for (const IP of ips) for (const [First, Last] of d.ports) group.dst.push({ IP, Ports: { First, Last } });
    }
    for (const group of groups.values()) {
      const srcIPs = sourcesOf(rule.src, inMap, group.self ? viewerSubject.owner : undefined);
      if (srcIPs.length === 0) continue;
      rules.push({ SrcIPs: srcIPs, DstPorts: group.dst, ...(group.protos && { IPProto: [...group.protos] }) });
    }
    if (rule.app) rules.push(...capGrantRules(rule, rule.app, ownPrefixes, viewerSubject, inMap));
  }
  if (companions) rules.push(...companionRules(policy, viewerSubject, ownPrefixes, inMap));
  return rules;
}

/**
 * Filters as JSON shared between viewers, per policy and users: `key` (see packetFilterJson) →
 * the filter's text split around the viewer's own addresses, at the odd indexes (the index of
 * the address they stand for).
 */
const templates = new WeakMap<CompiledPolicy, WeakMap<Map<string, string>, Map<string, string[]>>>();

/** A number per device object, naming it in template keys (a view's devices are never changed once made). */
const serials = new WeakMap<PolicyDevice, number>();
let nextSerial = 0;

function serialOf(device: PolicyDevice): number {
  let serial = serials.get(device);
  if (serial === undefined) {
    serial = nextSerial++;
    serials.set(device, serial);
  }
  return serial;
}

/** Devices in a map past which its filter is made on its own: a template's key names every one. */
export const MAX_TEMPLATE_DEVICES = 64;
/**
 * Templates kept per policy and users before they are dropped and made again: a policy lasts
 * while devices come and go, and each change to a device's row keys its group anew.
 */
export const MAX_TEMPLATES = 16_384;

/**
 * What a viewer's filter (and SSH policy) depends on besides its addresses: its identity (its
 * owner and principal keys) and the devices of its map, each named by its serial.
 */
export function mapGroupKey(subject: Subject, devices: readonly PolicyDevice[]): string {
  let key = `${subject.owner ?? ''}\n${[...subject.keys].join('\n')}\n`;
  for (const device of devices) key += `${serialOf(device)},`;
  return key;
}

/** Stands for the viewer's address k in a template (no filter IP or prefix looks like it). */
const OWN = /\{\{own:(\d+)\}\}/;

/**
 * packetFilter as the JSON a map sends. When the policy names no address prefix and the viewer
 * serves no route, a viewer's filter depends on it only through its identity (the principal
 * keys and owner its rules are found by) and its own addresses (the destinations it opens): the
 * sources are those of the devices in the map. The members of a group of devices that see each
 * other (one identity, one map) then differ only in their addresses, so the filter is made once
 * for them as a text with the addresses left out, and each member's is that text with its own
 * put in: a policy change builds one filter per group, not per device.
 */
export function packetFilterJson(
  policy: CompiledPolicy,
  viewer: PolicyDevice,
  devices: readonly PolicyDevice[],
  users: readonly PolicyUser[],
): string {
  if (policy.index.prefixes.length > 0 || viewer.routes.length > 0 || devices.length > MAX_TEMPLATE_DEVICES) {
    return JSON.stringify(packetFilter(policy, viewer, devices, users));
  }
  const roles = roleMap(users);
  const subject = subjectOf(policy, roles, viewer);
  // The addresses' lengths are in the text (CapGrant destinations): viewers share it only when they agree.
  const lengths = viewer.addresses.map(lengthOf).join('');
  const key = `${lengths}\n${mapGroupKey(subject, devices)}`;
  const byKey = innerMap(innerMap(templates, policy, WeakMap), roles, Map);
  let parts = byKey.get(key);
  if (!parts) {
    if (byKey.size >= MAX_TEMPLATES) byKey.clear();
    const own = viewer.addresses.map((_, k) => `{{own:${k}}}`);
    parts = JSON.stringify(filterRules(policy, roles, subject, own, prefixesOf(own, viewer), devices)).split(OWN);
    byKey.set(key, parts);
  }
  if (parts.length === 1) return parts[0];
  let text = parts[0];
  for (let k = 1; k < parts.length; k += 2) text += bare(viewer.addresses[Number(parts[k])]) + parts[k + 1];
  return text;
}

// A deliberately naive evaluator of the policy contract, written straight from its wording and
// sharing no code with the engine: selectors are matched by string inspection, addresses with
// node:net's BlockList, every pair of devices is checked. Property tests compare the engine with it.

import { BlockList, isIPv6 } from 'node:net';
import type { PeerView, PolicyDevice, PolicyUser } from '../../src/policy/index.js';

export interface RawRule {
  action: 'accept';
  src: string[];
  dst: string[];
  proto?: 'tcp' | 'udp' | 'icmp';
}

export interface RawPolicy {
  groups: Record<string, string[]>;
  tagOwners: Record<string, string[]>;
  hosts: Record<string, string>;
  acls: RawRule[];
}

const lists = new Map<string, BlockList>();

function inCidr(addr: string, cidr: string): boolean {
  const [net, len] = cidr.split('/');
  const fam = isIPv6(net) ? 'ipv6' : 'ipv4';
  if ((isIPv6(addr) ? 'ipv6' : 'ipv4') !== fam) return false;
  let list = lists.get(cidr);
  if (!list) {
    list = new BlockList();
    list.addSubnet(net, len === undefined ? (fam === 'ipv6' ? 128 : 32) : Number(len), fam);
    lists.set(cidr, list);
  }
  return list.check(addr, fam);
}

/** Aligned prefixes overlap exactly when one holds the other's network address. */
function cidrOverlap(a: string, b: string): boolean {
  return inCidr(a.split('/')[0], b) || inCidr(b.split('/')[0], a);
}

function isAddressSelector(p: RawPolicy, sel: string): boolean {
  return (
    sel !== '*' &&
    !sel.includes('@') &&
    !/^(tag|group|autogroup):/.test(sel) &&
    (p.hosts[sel] !== undefined || /[.:]/.test(sel))
  );
}

function cidrOf(p: RawPolicy, sel: string): string {
  return p.hosts[sel] ?? sel;
}

function matches(p: RawPolicy, sel: string, d: PolicyDevice, users: PolicyUser[]): boolean {
  const tagged = d.tags.length > 0;
  const role = users.find((u) => u.login === d.user)?.role;
  if (sel === '*') return true;
  if (sel === 'autogroup:member') return !tagged && d.user !== null;
  if (sel === 'autogroup:tagged') return tagged;
  if (sel === 'autogroup:admin') return !tagged && (role === 'owner' || role === 'admin');
  if (sel.startsWith('group:')) return !tagged && d.user !== null && p.groups[sel].includes(d.user);
  if (sel.startsWith('tag:')) return d.tags.includes(sel);
  if (sel.includes('@')) return !tagged && d.user === sel;
  if (sel === 'autogroup:internet') return false;
  const cidr = cidrOf(p, sel);
  // One IPv6 address names no device by its own address, only the subnets holding it.
  const loneV6 = isIPv6(cidr.split('/')[0]) && (!cidr.includes('/') || cidr.endsWith('/128'));
  const byAddress = !loneV6 && d.addresses.some((a) => inCidr(a, cidr));
  return byAddress || subnets(d.routes).some((r) => cidrOverlap(r, cidr));
}

const EXIT = ['0.0.0.0/0', '::/0'];
/** Routes less the default routes, which are no subnets. */
const subnets = (routes: string[]) => routes.filter((r) => !EXIT.includes(r));
const isExitNode = (d: PolicyDevice) => EXIT.every((r) => d.routes.includes(r));
const exitServing = (d: PolicyDevice) => isExitNode(d) && EXIT.every((r) => (d.primaryRoutes ?? d.routes).includes(r));

/** May the device use exit nodes: a rule from it to autogroup:internet, `*`, 0.0.0.0/0 or ::/0. */
function usesInternet(p: RawPolicy, d: PolicyDevice, users: PolicyUser[]): boolean {
  return p.acls.some(
    (r) =>
      r.src.some((s) => matches(p, s, d, users)) &&
      r.dst.some((e) => {
        const sel = splitDst(e).sel;
        return (
          sel === 'autogroup:internet' || sel === '*' || (isAddressSelector(p, sel) && cidrOf(p, sel).endsWith('/0'))
        );
      }),
  );
}

export function splitDst(entry: string): { sel: string; ports: string } {
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    return { sel: entry.slice(1, close), ports: entry.slice(close + 2) };
  }
  const i = entry.lastIndexOf(':');
  return { sel: entry.slice(0, i), ports: entry.slice(i + 1) };
}

function portIn(ports: string, port: number): boolean {
  if (ports === '*') return true;
  return ports.split(',').some((part) => {
    const [lo, hi] = part.split('-').map(Number);
    return port >= lo && port <= (hi ?? lo);
  });
}

function dstMatches(p: RawPolicy, sel: string, src: PolicyDevice, dst: PolicyDevice, users: PolicyUser[]): boolean {
  if (sel === 'autogroup:self') {
    return src.tags.length === 0 && dst.tags.length === 0 && src.user !== null && src.user === dst.user;
  }
  return matches(p, sel, dst, users);
}

/** May src reach dst at all (any port, any protocol)? */
export function refReachAny(p: RawPolicy, src: PolicyDevice, dst: PolicyDevice, users: PolicyUser[]): boolean {
  return p.acls.some(
    (r) =>
      r.src.some((s) => matches(p, s, src, users)) &&
      r.dst.some((e) => dstMatches(p, splitDst(e).sel, src, dst, users)),
  );
}

export function refCanReach(
  p: RawPolicy,
  src: PolicyDevice,
  dst: PolicyDevice,
  port: number,
  proto: string,
  users: PolicyUser[],
): boolean {
  return p.acls.some(
    (r) =>
      (r.proto === undefined || r.proto === proto) &&
      r.src.some((s) => matches(p, s, src, users)) &&
      r.dst.some((e) => {
        const { sel, ports } = splitDst(e);
        return (proto === 'icmp' || portIn(ports, port)) && dstMatches(p, sel, src, dst, users);
      }),
  );
}

function routeVisible(p: RawPolicy, viewer: PolicyDevice, route: string, users: PolicyUser[]): boolean {
  const touches = (sel: string) => sel === '*' || (isAddressSelector(p, sel) && cidrOverlap(cidrOf(p, sel), route));
  return p.acls.some(
    (r) =>
      (r.src.some((s) => matches(p, s, viewer, users)) && r.dst.some((e) => touches(splitDst(e).sel))) ||
      (r.dst.some((e) => splitDst(e).sel !== 'autogroup:self' && matches(p, splitDst(e).sel, viewer, users)) &&
        r.src.some(touches)),
  );
}

export function refPeers(p: RawPolicy, devices: PolicyDevice[], users: PolicyUser[], viewer: PolicyDevice): PeerView[] {
  const internet = usesInternet(p, viewer, users);
  return devices
    .filter(
      (d) =>
        d !== viewer &&
        (refReachAny(p, viewer, d, users) ||
          refReachAny(p, d, viewer, users) ||
          (internet && isExitNode(d)) ||
          (isExitNode(viewer) && usesInternet(p, d, users))),
    )
    .map((d) => ({
      id: d.id,
      allowedIPs: [
        ...d.addresses.map((a) => (isIPv6(a) ? `${a}/128` : `${a}/32`)),
        ...subnets(d.routes)
          .filter((r) => (d.primaryRoutes ?? d.routes).includes(r))
          .filter((r) => routeVisible(p, viewer, r, users)),
        ...(internet && exitServing(d) ? EXIT : []),
      ],
    }));
}

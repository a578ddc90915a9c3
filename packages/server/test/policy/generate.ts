// Seeded random networks and policies for property tests and benchmarks (no dependencies).

import {
  type CompiledPolicy,
  type PolicyDevice,
  type PolicyRole,
  type PolicyUser,
  validatePolicy,
} from '../../src/policy/index.js';
import type { RawPolicy, RawRule } from './reference.js';

/** A generated policy's text compiled; generated policies are valid, so a refusal is a bug here. */
export function compiledPolicy(text: string): CompiledPolicy {
  const r = validatePolicy(text);
  if (!r.ok) throw new Error(`generated policy is invalid: ${JSON.stringify(r.errors)}\n${text}`);
  return r.policy;
}

/** mulberry32: small, fast, good enough to spread test cases. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const chance = (p: number) => next() < p;
  const some = <T>(xs: readonly T[], max: number): T[] => {
    const out = new Set<T>();
    const k = int(max + 1);
    for (let i = 0; i < k && xs.length > 0; i++) out.add(pick(xs));
    return [...out];
  };
  return { next, int, pick, chance, some };
}

export interface Network {
  policy: RawPolicy;
  users: PolicyUser[];
  devices: PolicyDevice[];
}

const ROLES: PolicyRole[] = ['owner', 'admin', 'network-admin', 'it-admin', 'auditor', 'member'];
const ROUTES = ['10.0.0.0/24', '10.0.1.0/24', '10.0.0.0/16', '10.0.0.128/25', '192.168.1.0/24', 'fd00:1::/64'];
// Narrow prefixes are common; prefixes holding most devices (or every address) are rare, so
// that most policies are sparse enough to exercise the class and prefix bookkeeping.
const PREFIXES = [
  '100.64.0.0/28',
  '100.64.0.1',
  '100.64.0.5',
  '10.0.0.0/8',
  '10.0.0.0/24',
  '10.0.1.0/24',
  '10.0.0.64/26',
  '10.0.0.200',
  '192.168.0.0/16',
  'fd7a:115c:a1e0::3',
  'fd7a:115c:a1e0::10/124',
  'fd00::/8',
];
const BROAD = ['100.64.0.0/10', 'fd7a:115c:a1e0::/48', '0.0.0.0/0', '*'];
const PORTS = ['*', '22', '80,443', '1000-2000', '443'];

/**
 * A random network and policy. `prefixes: false` leaves addresses and prefixes out of the
 * policy (hosts, IP and CIDR selectors): only identities and `*` select devices.
 */
export function randomNetwork(
  seed: number,
  size: { users: number; devices: number; rules: number; prefixes?: boolean } = { users: 8, devices: 40, rules: 8 },
): Network {
  const r = prng(seed);
  const users: PolicyUser[] = Array.from({ length: 2 + r.int(size.users) }, (_, i) => ({
    login: `u${i}@example.com`,
    role: r.pick(ROLES),
  }));
  const logins = users.map((u) => u.login);
  const groups: Record<string, string[]> = {};
  for (let i = r.int(5); i > 0; i--) groups[`group:g${i}`] = r.some(logins, 3);
  const tags = Array.from({ length: 1 + r.int(5) }, (_, i) => `tag:t${i}`);
  const tagOwners: Record<string, string[]> = {};
  for (const t of tags) tagOwners[t] = r.some([...logins, ...Object.keys(groups), 'autogroup:admin'], 2);
  const hosts: Record<string, string> = {};
  for (let i = r.int(4); i > 0; i--) hosts[`h${i}`] = r.chance(0.1) ? r.pick(BROAD.slice(0, 3)) : r.pick(PREFIXES);

  const devices: PolicyDevice[] = Array.from({ length: 2 + r.int(size.devices) }, (_, i) => {
    const tagged = r.chance(0.3);
    const addresses = [`100.64.${i >> 8}.${(i & 255) + 1}`];
    if (r.chance(0.7)) addresses.push(`fd7a:115c:a1e0::${(i + 1).toString(16)}`);
    return {
      id: `dev${i}`,
      user: r.chance(0.05) ? null : r.pick(logins),
      tags: tagged
        ? r
            .some([...tags, 'tag:stray'], 2)
            .concat(r.chance(0.5) ? [r.pick(tags)] : [])
            .filter((t, j, a) => a.indexOf(t) === j)
        : [],
      addresses,
      routes: r.chance(0.15) ? r.some(ROUTES, 2) : [],
    };
  });
  // Exit nodes (both default routes), some offline (their default routes not in service), and
  // devices with one default route only, which makes no exit node.
  for (const d of devices) {
    if (r.chance(0.08)) d.routes = [...d.routes, '0.0.0.0/0', '::/0'];
    else if (r.chance(0.03)) d.routes = [...d.routes, r.pick(['0.0.0.0/0', '::/0'])];
  }
  for (const d of devices) if (d.tags.length === 0 && r.chance(0.1)) d.tags = [r.pick(tags)];
  // Standby routers: some routes are served but not as primary (selectors match them all the same).
  for (const d of devices) if (d.routes.length > 0 && r.chance(0.4)) d.primaryRoutes = r.some(d.routes, 2);

  const identities = [...logins, ...Object.keys(groups), 'autogroup:member'];
  const principals = [...identities, ...tags, 'autogroup:tagged', 'autogroup:admin'];
  const withPrefixes = size.prefixes ?? true;
  const addresses = [...Object.keys(hosts), ...PREFIXES];
  const broad = withPrefixes ? BROAD : ['*'];
  const selector = () =>
    r.chance(0.03) ? r.pick(broad) : withPrefixes && r.chance(0.25) ? r.pick(addresses) : r.pick(principals);
  const coversEveryone = (sels: string[]) =>
    // fd00::/8 holds fd7a:115c:a1e0::/48, where every device has an address.
    sels.some((sel) => sel === '*' || [...BROAD, 'fd00::/8'].includes(hosts[sel] ?? sel)) ||
    (sels.includes('autogroup:member') && sels.includes('autogroup:tagged'));
  const several = (max: number, pick: () => string) => [...new Set(Array.from({ length: 1 + r.int(max) }, pick))];
  const acls: RawRule[] = Array.from({ length: 1 + r.int(size.rules) }, () => {
    const self = r.chance(0.15);
    // autogroup:self takes users and what stands for them: only their user-owned devices match.
    const src = self ? several(3, () => r.pick([...identities, 'autogroup:admin'])) : several(3, selector);
    const dst = several(3, selector).map((sel) => {
      const ports = r.pick(PORTS);
      return sel.includes(':') && !/^(tag|group|autogroup):/.test(sel) && r.chance(0.5)
        ? `[${sel}]:${ports}`
        : `${sel}:${ports}`;
    });
    if (self) dst.push(`autogroup:self:${r.pick(PORTS)}`);
    if (r.chance(0.1)) dst.push(`autogroup:internet:${r.pick(PORTS)}`);
    const rule: RawRule = {
      action: 'accept',
      src,
      // Sources holding every device must not reach every port of every device (over-permissive).
      dst: coversEveryone(src) ? dst.map((d) => d.replace(/:\*$/, ':22')) : dst,
    };
    if (r.chance(0.2)) rule.proto = r.pick(['tcp', 'udp', 'icmp'] as const);
    if (rule.proto === 'icmp') rule.dst = rule.dst.map((d) => d.replace(/:[^:\]]*$/, ':*'));
    return rule;
  });
  return { policy: { groups, tagOwners, hosts: withPrefixes ? hosts : {}, acls }, users, devices };
}

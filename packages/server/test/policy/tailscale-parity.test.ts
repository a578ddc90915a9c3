// Where Warren's engine once gave more than Tailscale's control plane: each block pins one
// behaviour recorded from Tailscale (see captures/ for whole networks showing the same).

import { describe, expect, it } from 'vitest';
import {
  autoApproves,
  canReach,
  compilePolicy,
  PeerMap,
  type PolicyDevice,
  type PolicyUser,
  validatePolicy,
} from '../../src/policy/index.js';
import { errorsOf, expectErrorAt } from './helpers.js';

const EXIT = ['0.0.0.0/0', '::/0'];
const users: PolicyUser[] = [
  { login: 'ana@example.com', role: 'member' },
  { login: 'bo@example.com', role: 'owner' },
];

const device = (id: string, n: number, owner: string | null, tags: string[], advertised: string[] = []) => ({
  id,
  user: owner,
  tags,
  addresses: [`100.64.0.${n}`, `fd7a:115c:a1e0::${n}`],
  advertised,
});

/**
 * The devices as the server holds them once the policy's autoApprovers have approved what their
 * devices advertise (nothing is approved by hand here).
 */
function approved(policyText: string, list: ReturnType<typeof device>[]): PeerMap {
  const policy = compilePolicy(policyText);
  const devices: PolicyDevice[] = list.map(({ advertised, ...d }) => ({
    ...d,
    routes: advertised.filter((prefix) => autoApproves(policy, prefix, { ...d, routes: [] }, users)),
  }));
  return new PeerMap(policy, devices, users);
}

const view = (map: PeerMap, id: string) => Object.fromEntries(map.peers(id).map((p) => [p.id, p.allowedIPs]));

describe('exit routes in allowedIPs', () => {
  const text = `{
    "tagOwners": { "tag:exit": ["autogroup:admin"], "tag:gw": ["autogroup:admin"] },
    "acls": [
      { "action": "accept", "src": ["autogroup:member"], "dst": ["tag:exit:22", "tag:gw:22"] },
      { "action": "accept", "src": ["ana@example.com"], "dst": ["autogroup:internet:*"] },
    ],
    "autoApprovers": {
      "routes": { "0.0.0.0/0": ["tag:exit"], "::/0": ["tag:exit"] },
      "exitNode": ["tag:gw"],
    },
  }`;
  const policy = compilePolicy(text);
  const exit = device('exit', 3, null, ['tag:exit'], [...EXIT, '192.168.7.0/24']);
  const gw = device('gw', 4, null, ['tag:gw'], EXIT);

  it('approves a default route through exitNode only: a routes prefix of 0.0.0.0/0 approves the subnets inside it', () => {
    const asDevice = ({ advertised: _, ...d }: ReturnType<typeof device>) => ({ ...d, routes: [] });
    expect(EXIT.map((p) => autoApproves(policy, p, asDevice(exit), users))).toEqual([false, false]);
    expect(autoApproves(policy, '192.168.7.0/24', asDevice(exit), users)).toBe(true);
    expect(EXIT.map((p) => autoApproves(policy, p, asDevice(gw), users))).toEqual([true, true]);
  });

  it('gives a device the default routes of an exit node approved by exitNode, never of one the routes map names', () => {
    const map = approved(text, [
      device('laptop', 1, 'ana@example.com', []),
      device('phone', 2, 'bo@example.com', []),
      exit,
      gw,
    ]);
    // ana may use exit nodes: gw carries both default routes; exit is no exit node, so its
    // addresses alone (its subnet is not hers to reach).
    expect(view(map, 'laptop')).toEqual({
      exit: ['100.64.0.3/32', 'fd7a:115c:a1e0::3/128'],
      gw: ['100.64.0.4/32', 'fd7a:115c:a1e0::4/128', ...EXIT],
    });
    // bo reaches both on port 22 but has no rule to autogroup:internet.
    expect(view(map, 'phone')).toEqual({
      exit: ['100.64.0.3/32', 'fd7a:115c:a1e0::3/128'],
      gw: ['100.64.0.4/32', 'fd7a:115c:a1e0::4/128'],
    });
  });
});

describe('exit nodes as peers', () => {
  const text = `{
    "tagOwners": { "tag:exit": ["autogroup:admin"], "tag:gw": ["autogroup:admin"], "tag:web": ["autogroup:admin"] },
    "acls": [
      { "action": "accept", "src": ["*"], "dst": ["autogroup:internet:*"] },
      { "action": "accept", "src": ["tag:web"], "dst": ["8.8.8.8:53"] },
    ],
    "autoApprovers": { "routes": { "0.0.0.0/0": ["tag:exit"], "::/0": ["tag:exit"] } },
  }`;

  it('makes no peer of a device whose default routes only the routes map names', () => {
    const map = approved(text, [
      device('laptop', 1, 'ana@example.com', []),
      device('web', 2, null, ['tag:web']),
      device('exit', 3, null, ['tag:exit'], EXIT),
    ]);
    for (const id of ['laptop', 'web', 'exit']) expect(map.peers(id), id).toEqual([]);
  });

  it('makes an exit node a peer of those allowed autogroup:internet once both default routes are approved', () => {
    const withGw = text.replace('"autoApprovers": {', '"autoApprovers": { "exitNode": ["tag:exit"],');
    const map = approved(withGw, [
      device('laptop', 1, 'ana@example.com', []),
      device('web', 2, null, ['tag:web']),
      device('exit', 3, null, ['tag:exit'], EXIT),
    ]);
    expect(Object.keys(view(map, 'laptop'))).toEqual(['exit']);
    expect(Object.keys(view(map, 'exit'))).toEqual(['laptop', 'web']);
  });
});

describe('autogroup:self with tags', () => {
  it('refuses a tag among the sources of a rule to autogroup:self, at that source', () => {
    const text = `{
  "tagOwners": { "tag:ci": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["autogroup:member", "tag:ci"], "dst": ["autogroup:self:*"] },
  ],
  "grants": [{ "src": ["group:eng", "tag:ci"], "dst": ["autogroup:self"], "ip": ["22"] }],
  "groups": { "group:eng": ["ana@example.com"] },
}`;
    const errors = errorsOf(text);
    const msg = 'autogroup:self can only be used with users, groups, autogroup:member, autogroup:admin or "*" in src';
    expectErrorAt(errors, text, '"tag:ci"', `${msg}, and "tag:ci" is a tag`, 2);
    expectErrorAt(errors, text, '"tag:ci"', `${msg}, and "tag:ci" is a tag`, 3);
    expect(errors).toHaveLength(2);
  });

  it('takes users, groups, autogroup:member, autogroup:admin and * as its sources', () => {
    const text = `{
  "groups": { "group:eng": ["ana@example.com"] },
  "acls": [
    { "action": "accept", "src": ["ana@example.com", "group:eng", "autogroup:member", "autogroup:admin"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["*"], "dst": ["autogroup:self:22"] },
  ],
}`;
    expect(validatePolicy(text).errors).toEqual([]);
  });
});

describe('policy-test semantics', () => {
  const rules = `
  "tagOwners": { "tag:server": ["autogroup:admin"], "tag:client": ["autogroup:admin"] },
  "hosts": { "webserver": "100.64.0.16", "internal": "10.0.0.0/8" },
  "acls": [
    { "action": "accept", "src": ["thor@example.org"], "dst": ["webserver:*"] },
    { "action": "accept", "src": ["thor@example.org"], "dst": ["webserver:*"], "proto": "icmp" },
  ],
  "grants": [{ "src": ["tag:client"], "dst": ["internal", "100.64.0.16/32", "webserver"], "ip": ["tcp:22"] }],`;
  const withTests = (tests: string) => `{${rules}\n  "tests": ${tests},\n}`;

  it('keeps the port forms the contract allows in an accept: every listed port must be accepted', () => {
    // Tailscale fails an accept of a port list, a range or `*`; Warren's contract keeps them,
    // checking every port they name (docs/decisions/policy.md).
    const text = withTests(`[
    { "src": "thor@example.org", "accept": ["webserver:80,443,8080", "webserver:8000-8100"] },
    { "src": "thor@example.org", "accept": ["webserver:*"], "proto": "icmp" },
  ]`);
    expect(validatePolicy(text).errors).toEqual([]);
    const closed = withTests(`[{ "src": "tag:client", "accept": ["webserver:22,23"] }]`);
    expectErrorAt(errorsOf(closed), closed, '"webserver:22,23"', 'expected accept');
  });

  it('fails an accept naming a CIDR, a /32 or a host alias of a range, even one a grant opens', () => {
    const text = withTests(`[
    { "src": "tag:client", "accept": ["10.0.0.0/8:22", "internal:22", "100.64.0.16/32:22"] },
  ]`);
    const errors = errorsOf(text);
    const range = 'names a range of addresses: an accept checks one host';
    expectErrorAt(errors, text, '"10.0.0.0/8:22"', range);
    expectErrorAt(errors, text, '"internal:22"', range);
    expectErrorAt(errors, text, '"100.64.0.16/32:22"', range);
    expect(errors).toHaveLength(3);
  });

  it('passes an accept of one host and one port, whether acls or grants open it', () => {
    const text = withTests(`[
    { "src": "thor@example.org", "accept": ["webserver:80", "100.64.0.16:8080"], "deny": ["tag:client:22"] },
    { "src": "thor@example.org", "accept": ["webserver:1"], "proto": "icmp" },
    { "src": "tag:client", "accept": ["webserver:22", "100.64.0.16:22", "10.1.2.3:22"], "deny": ["webserver:80-443"] },
  ]`);
    expect(validatePolicy(text).errors).toEqual([]);
  });
});

describe('IPv6 coverage', () => {
  const devices: PolicyDevice[] = [
    { id: 'web', user: null, tags: ['tag:web'], addresses: ['100.64.0.16', 'fd7a:115c:a1e0::10'], routes: [] },
    { id: 'client', user: null, tags: ['tag:client'], addresses: ['100.64.0.14', 'fd7a:115c:a1e0::e'], routes: [] },
    { id: 'laptop', user: 'ana@example.com', tags: [], addresses: ['100.64.0.1', 'fd7a:115c:a1e0::1'], routes: [] },
    {
      id: 'r6',
      user: null,
      tags: ['tag:router'],
      addresses: ['100.64.0.2', 'fd7a:115c:a1e0::2'],
      routes: ['fd00:1::/64'],
    },
  ];
  const peersOf = (text: string) => {
    const map = new PeerMap(compilePolicy(text), devices, users);
    return Object.fromEntries(devices.map((d) => [d.id, map.peers(d.id).map((p) => p.id)]));
  };
  const tags = '"tagOwners": { "tag:web": [], "tag:client": [], "tag:router": [] }';

  it('makes no peers through a rule naming one IPv6 address of a device, bare or /128', () => {
    const none = { web: [], client: [], laptop: [], r6: [] };
    expect(
      peersOf(`{ ${tags}, "grants": [{ "src": ["tag:client"], "dst": ["fd7a:115c:a1e0::10"], "ip": ["tcp:22"] }] }`),
    ).toEqual(none);
    expect(
      peersOf(`{ ${tags}, "acls": [{ "action": "accept", "src": ["*"], "dst": ["fd7a:115c:a1e0::1/128:443"] }] }`),
    ).toEqual(none);
    const policy = compilePolicy(
      `{ ${tags}, "acls": [{ "action": "accept", "src": ["*"], "dst": ["fd7a:115c:a1e0::10/128:443"] }] }`,
    );
    expect(canReach(policy, devices[1], devices[0], 443, 'tcp', users)).toBe(false);
    expect(canReach(policy, devices[1], 'fd7a:115c:a1e0::10', 443, 'tcp', users)).toBe(true);
  });

  it('still pairs devices through a wider IPv6 prefix, and routers through a lone address in their subnet', () => {
    const wide = peersOf(
      `{ ${tags}, "acls": [{ "action": "accept", "src": ["tag:client"], "dst": ["fd7a:115c:a1e0::/64:*"] }] }`,
    );
    expect(wide.client).toEqual(['web', 'laptop', 'r6']);
    const routed = peersOf(
      `{ ${tags}, "acls": [{ "action": "accept", "src": ["tag:client"], "dst": ["fd00:1::5:443"] }] }`,
    );
    expect(routed).toEqual({ web: [], client: ['r6'], laptop: [], r6: ['client'] });
  });
});

// Single questions on concrete devices: reachability, auto-approval, tag ownership.

import { describe, expect, it } from 'vitest';
import {
  autoApproves,
  canApplyTags,
  canReach,
  compilePolicy,
  DEFAULT_POLICY,
  type PolicyDevice,
  type PolicyUser,
  tagOwners,
  validatePolicy,
} from '../../src/policy/index.js';

const users: PolicyUser[] = [
  { login: 'ana@example.com', role: 'member' },
  { login: 'bo@example.com', role: 'admin' },
  { login: 'cy@example.com', role: 'owner' },
  { login: 'di@example.com', role: 'network-admin' },
];
const dev = (
  id: string,
  user: string | null,
  tags: string[],
  addresses: string[],
  routes: string[] = [],
): PolicyDevice => ({
  id,
  user,
  tags,
  addresses,
  routes,
});
const ana1 = dev('ana1', 'ana@example.com', [], ['100.64.0.1', 'fd7a:115c:a1e0::1']);
const ana2 = dev('ana2', 'ana@example.com', [], ['100.64.0.2']);
const bo1 = dev('bo1', 'bo@example.com', [], ['100.64.0.3']);
const srv = dev('srv', 'ana@example.com', ['tag:server'], ['100.64.0.4']);
const router = dev('router', 'bo@example.com', ['tag:router'], ['100.64.0.5'], ['10.0.0.0/24']);
const orphan = dev('orphan', null, [], ['100.64.0.6']);

describe('the default policy', () => {
  const policy = compilePolicy(DEFAULT_POLICY);

  it('validates, comments included', () => {
    expect(validatePolicy(DEFAULT_POLICY)).toMatchObject({ ok: true, errors: [] });
    expect(DEFAULT_POLICY).toContain('//');
  });

  it('lets members reach their own devices and admins everything', () => {
    expect(canReach(policy, ana1, ana2, 22, 'tcp', users)).toBe(true);
    expect(canReach(policy, ana1, bo1, 22, 'tcp', users)).toBe(false);
    expect(canReach(policy, ana1, srv, 22, 'tcp', users)).toBe(false);
    expect(canReach(policy, srv, ana1, 22, 'tcp', users)).toBe(false);
    expect(canReach(policy, bo1, ana1, 22, 'tcp', users)).toBe(true);
    expect(canReach(policy, bo1, srv, 443, 'udp', users)).toBe(true);
    expect(canReach(policy, bo1, '10.0.0.9', 80, 'tcp', users)).toBe(true);
    expect(canReach(policy, orphan, ana1, 22, 'tcp', users)).toBe(false);
  });
});

describe('canReach', () => {
  const policy = compilePolicy(`{
    "groups": { "group:eng": ["ana@example.com"] },
    "tagOwners": { "tag:server": ["group:eng"], "tag:router": ["autogroup:admin"] },
    "hosts": { "lan": "10.0.0.0/24", "six": "fd7a:115c:a1e0::/120" },
    "acls": [
      { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22,8000-8999", "lan:443"] },
      { "action": "accept", "src": ["autogroup:tagged"], "dst": ["six:53"], "proto": "udp" },
      { "action": "accept", "src": ["10.0.0.0/16"], "dst": ["bo@example.com:*"], "proto": "icmp" },
      { "action": "accept", "src": ["*"], "dst": ["100.64.0.6:80"] },
    ],
  }`);

  it('checks ports and protocols', () => {
    expect(canReach(policy, ana1, srv, 22, 'tcp', users)).toBe(true);
    expect(canReach(policy, ana1, srv, 8500, 'udp', users)).toBe(true);
    expect(canReach(policy, ana1, srv, 9000, 'tcp', users)).toBe(false);
    expect(canReach(policy, ana1, srv, 22, 'icmp', users)).toBe(true);
    expect(canReach(policy, srv, ana1, 53, 'udp', users)).toBe(true);
    expect(canReach(policy, srv, ana1, 53, 'tcp', users)).toBe(false);
  });

  it('identifies a tagged device by its tags alone', () => {
    const taggedAna = dev('t', 'ana@example.com', ['tag:router'], ['100.64.0.9']);
    expect(canReach(policy, taggedAna, srv, 22, 'tcp', users)).toBe(false);
  });

  it('matches addresses, prefixes and the routers that serve them', () => {
    expect(canReach(policy, ana1, '10.0.0.7', 443, 'tcp', users)).toBe(true);
    expect(canReach(policy, ana1, '10.0.0.0/25', 443, 'tcp', users)).toBe(true);
    expect(canReach(policy, ana1, '10.0.1.7', 443, 'tcp', users)).toBe(false);
    expect(canReach(policy, ana1, 'not an ip', 443, 'tcp', users)).toBe(false);
    // The router serves 10.0.0.0/24, which the rule's destination overlaps.
    expect(canReach(policy, ana1, router, 443, 'tcp', users)).toBe(true);
    // ... and is a source for 10.0.0.0/16.
    expect(canReach(policy, router, bo1, 0, 'icmp', users)).toBe(true);
    expect(canReach(policy, router, ana1, 0, 'icmp', users)).toBe(false);
    expect(canReach(policy, orphan, orphan, 80, 'tcp', users)).toBe(true);
    expect(canReach(policy, ana1, '100.64.0.6', 80, 'tcp', users)).toBe(true);
  });

  it('resolves an address to its device when devices are given', () => {
    expect(canReach(policy, ana1, '100.64.0.4', 22, 'tcp', users)).toBe(false);
    expect(canReach(policy, ana1, '100.64.0.4', 22, 'tcp', users, [ana1, srv])).toBe(true);
    expect(canReach(policy, srv, 'fd7a:115c:a1e0:0::1', 53, 'udp', users)).toBe(true);
  });
});

describe('autoApproves', () => {
  const policy = compilePolicy(`{
    "groups": { "group:net": ["ana@example.com"] },
    "tagOwners": { "tag:router": ["autogroup:admin"], "tag:exit": ["autogroup:admin"] },
    "autoApprovers": {
      "routes": {
        "10.0.0.0/8": ["tag:router", "group:net"],
        "192.168.0.0/16": ["autogroup:admin"],
        "172.16.0.0/12": ["bo@example.com"],
        "fd00::/8": ["*"],
      },
      "exitNode": ["tag:exit"],
    },
  }`);

  it('approves a prefix inside an approved prefix for matching devices only', () => {
    expect(autoApproves(policy, '10.0.0.0/24', router, users)).toBe(true);
    expect(autoApproves(policy, '10.0.0.0/8', router, users)).toBe(true);
    expect(autoApproves(policy, '10.0.0.0/7', router, users)).toBe(false);
    expect(autoApproves(policy, '11.0.0.0/24', router, users)).toBe(false);
    expect(autoApproves(policy, '10.1.0.0/16', ana1, users)).toBe(true);
    expect(autoApproves(policy, '10.1.0.0/16', bo1, users)).toBe(false);
    expect(autoApproves(policy, '192.168.1.0/24', bo1, users)).toBe(true);
    expect(autoApproves(policy, '192.168.1.0/24', ana1, users)).toBe(false);
    expect(autoApproves(policy, '172.16.5.0/24', bo1, users)).toBe(true);
    expect(autoApproves(policy, '172.16.5.0/24', ana1, users)).toBe(false);
    // A tagged device is its tags alone, whoever its user is.
    expect(autoApproves(policy, '172.16.5.0/24', router, users)).toBe(false);
    expect(autoApproves(policy, 'fd00:1::/32', orphan, users)).toBe(true);
    expect(autoApproves(policy, 'garbage', router, users)).toBe(false);
  });

  it('approves exit routes through exitNode', () => {
    const exit = dev('exit', 'bo@example.com', ['tag:exit'], ['100.64.0.8']);
    expect(autoApproves(policy, '0.0.0.0/0', exit, users)).toBe(true);
    expect(autoApproves(policy, '::/0', exit, users)).toBe(true);
    expect(autoApproves(policy, '0.0.0.0/0', router, users)).toBe(false);
  });
});

describe('tag ownership', () => {
  const policy = compilePolicy(`{
    "groups": { "group:eng": ["ana@example.com", "ed@example.com"] },
    "tagOwners": {
      "tag:server": ["group:eng", "bo@example.com"],
      "tag:ci": ["autogroup:admin"],
      "tag:any": ["autogroup:member"],
      "tag:child": ["tag:server"],
      "tag:locked": [],
    },
  }`);

  it('resolves owners to logins (and owner tags)', () => {
    expect([...tagOwners(policy, 'tag:server', users)].sort()).toEqual([
      'ana@example.com',
      'bo@example.com',
      'ed@example.com',
    ]);
    expect([...tagOwners(policy, 'tag:ci', users)].sort()).toEqual(['bo@example.com', 'cy@example.com']);
    expect(tagOwners(policy, 'tag:any', users).size).toBe(4);
    expect([...tagOwners(policy, 'tag:child', users)]).toEqual(['tag:server']);
    expect(tagOwners(policy, 'tag:locked', users).size).toBe(0);
    expect(tagOwners(policy, 'tag:undefined', users).size).toBe(0);
  });

  it('lets owners, admin roles and API keys apply defined tags only', () => {
    const ana = users[0];
    const member = { login: 'zed@example.com', role: 'member' as const };
    expect(canApplyTags(policy, ['tag:server', 'tag:any'], { user: ana, isAdminKey: false })).toEqual({
      ok: true,
      unknown: [],
      notOwned: [],
    });
    expect(canApplyTags(policy, ['tag:ci', 'tag:nope'], { user: ana, isAdminKey: false })).toEqual({
      ok: false,
      unknown: ['tag:nope'],
      notOwned: ['tag:ci'],
    });
    expect(canApplyTags(policy, ['tag:server'], { user: member, isAdminKey: false }).ok).toBe(false);
    expect(canApplyTags(policy, ['tag:locked', 'tag:ci'], { user: null, isAdminKey: true }).ok).toBe(true);
    expect(canApplyTags(policy, ['tag:nope'], { user: null, isAdminKey: true })).toEqual({
      ok: false,
      unknown: ['tag:nope'],
      notOwned: [],
    });
    expect(canApplyTags(policy, ['tag:locked'], { user: users[3], isAdminKey: false }).ok).toBe(true);
    expect(canApplyTags(policy, ['tag:child'], { user: null, isAdminKey: false, deviceTags: ['tag:server'] }).ok).toBe(
      true,
    );
    expect(canApplyTags(policy, ['tag:child'], { user: null, isAdminKey: false }).ok).toBe(false);
    expect(canApplyTags(policy, [], { user: null, isAdminKey: false }).ok).toBe(true);
  });
});

// Peer maps on small hand-made networks: visibility, subnet routers and allowedIPs.

import { describe, expect, it } from 'vitest';
import { compilePolicy, computePeerMaps, DEFAULT_POLICY, type PolicyUser } from '../../src/policy/index.js';
import { dev } from './helpers.js';

const users: PolicyUser[] = [
  { login: 'ana@example.com', role: 'member' },
  { login: 'bo@example.com', role: 'admin' },
  { login: 'cy@example.com', role: 'member' },
];
const ids = (views: { id: string }[]) => views.map((v) => v.id);

describe('default policy peers', () => {
  const devices = [
    dev('ana1', 'ana@example.com', [], 1),
    dev('ana2', 'ana@example.com', [], 2),
    dev('bo1', 'bo@example.com', [], 3),
    dev('cy1', 'cy@example.com', [], 4),
    dev('srv', 'ana@example.com', ['tag:server'], 5),
  ];
  const peers = computePeerMaps(compilePolicy(DEFAULT_POLICY), devices, users);

  it('pairs a member with their own devices and the admins, the admin with everyone', () => {
    expect(ids(peers('ana1'))).toEqual(['ana2', 'bo1']);
    expect(ids(peers('cy1'))).toEqual(['bo1']);
    expect(ids(peers('bo1'))).toEqual(['ana1', 'ana2', 'cy1', 'srv']);
    // A tagged device is not its user's: only the admin sees it.
    expect(ids(peers('srv'))).toEqual(['bo1']);
  });

  it('lists addresses as /32 and /128', () => {
    expect(peers('ana1')[0]).toEqual({ id: 'ana2', allowedIPs: ['100.64.0.2/32', 'fd7a:115c:a1e0::2/128'] });
  });
});

describe('subnet routers', () => {
  const policy = compilePolicy(`{
    "groups": { "group:eng": ["ana@example.com"] },
    "tagOwners": { "tag:router": ["autogroup:admin"], "tag:web": ["autogroup:admin"] },
    "hosts": { "office": "192.168.1.0/24", "printer": "192.168.1.9" },
    "acls": [
      { "action": "accept", "src": ["group:eng"], "dst": ["office:443", "tag:router:22"] },
      { "action": "accept", "src": ["10.20.0.0/16"], "dst": ["tag:web:80"] },
      { "action": "accept", "src": ["cy@example.com"], "dst": ["printer:631"] },
    ],
  }`);
  const devices = [
    dev('ana1', 'ana@example.com', [], 1),
    dev('gw-office', 'bo@example.com', ['tag:router'], 2, ['192.168.1.0/24', '172.16.0.0/12']),
    dev('gw-dc', 'bo@example.com', ['tag:router'], 3, ['10.20.0.0/16']),
    dev('web', 'bo@example.com', ['tag:web'], 4),
    dev('cy1', 'cy@example.com', [], 5),
    dev('lonely', 'bo@example.com', [], 6),
  ];
  const peers = computePeerMaps(policy, devices, users);

  it('carries a route only to viewers that may send into it', () => {
    expect(peers('ana1')).toEqual([
      { id: 'gw-office', allowedIPs: ['100.64.0.2/32', 'fd7a:115c:a1e0::2/128', '192.168.1.0/24'] },
      { id: 'gw-dc', allowedIPs: ['100.64.0.3/32', 'fd7a:115c:a1e0::3/128'] },
    ]);
    expect(peers('cy1')).toEqual([
      { id: 'gw-office', allowedIPs: ['100.64.0.2/32', 'fd7a:115c:a1e0::2/128', '192.168.1.0/24'] },
    ]);
  });

  it('carries a route to viewers that traffic from it may reach', () => {
    expect(peers('web')).toEqual([
      { id: 'gw-dc', allowedIPs: ['100.64.0.3/32', 'fd7a:115c:a1e0::3/128', '10.20.0.0/16'] },
    ]);
    expect(ids(peers('gw-dc'))).toEqual(['ana1', 'web']);
  });

  it('shows the router the devices it is paired with, without routes of theirs', () => {
    expect(ids(peers('gw-office'))).toEqual(['ana1', 'cy1']);
    expect(peers('lonely')).toEqual([]);
  });

  it('follows the routes the caller marks as primary', () => {
    const moved = devices.map((d) =>
      d.id === 'gw-office' ? { ...d, routes: [] } : d.id === 'lonely' ? { ...d, routes: ['192.168.1.0/24'] } : d,
    );
    const again = computePeerMaps(policy, moved, users);
    expect(ids(again('cy1'))).toEqual(['lonely']);
    expect(again('cy1')[0].allowedIPs).toContain('192.168.1.0/24');
  });
});

describe('autogroup:self and results', () => {
  const policy = compilePolicy(`{
    "groups": { "group:eng": ["ana@example.com", "cy@example.com"] },
    "acls": [{ "action": "accept", "src": ["group:eng"], "dst": ["autogroup:self:22"] }],
  }`);
  const devices = [
    dev('ana1', 'ana@example.com', [], 1),
    dev('bo1', 'bo@example.com', [], 2),
    dev('ana2', 'ana@example.com', [], 3),
    dev('bo2', 'bo@example.com', [], 4),
    dev('cy1', 'cy@example.com', [], 5),
  ];
  const peers = computePeerMaps(policy, devices, users);

  it('pairs only devices of the same user in the src', () => {
    expect(ids(peers('ana1'))).toEqual(['ana2']);
    expect(ids(peers('bo1'))).toEqual([]);
    expect(ids(peers('cy1'))).toEqual([]);
  });

  it('returns frozen views that can be shared between calls', () => {
    const view = peers('ana1')[0];
    expect(Object.isFrozen(view)).toBe(true);
    expect(peers('ana1')[0]).toBe(view);
  });
});

describe('autogroup:self after users and `*`', () => {
  const policy = compilePolicy(`{
    "tagOwners": { "tag:server": ["autogroup:admin"] },
    "acls": [
      { "action": "accept", "src": ["cy@example.com", "bo@example.com"], "dst": ["autogroup:self:*"] },
      { "action": "accept", "src": ["*"], "dst": ["autogroup:self:22"] },
    ],
  }`);
  const devices = [
    dev('ana1', 'ana@example.com', [], 1),
    dev('ana2', 'ana@example.com', [], 2),
    dev('cy1', 'cy@example.com', [], 3),
    dev('cy2', 'cy@example.com', [], 4),
    dev('srv', 'cy@example.com', ['tag:server'], 5),
  ];
  const peers = computePeerMaps(policy, devices, users);

  it('pairs only the user-owned devices among the sources', () => {
    expect(ids(peers('cy1'))).toEqual(['cy2']);
    // ana is a source through `*` only: her devices reach each other.
    expect(ids(peers('ana1'))).toEqual(['ana2']);
    expect(ids(peers('ana2'))).toEqual(['ana1']);
    // A tagged source owns no devices: autogroup:self gives it nothing.
    expect(ids(peers('srv'))).toEqual([]);
  });
});

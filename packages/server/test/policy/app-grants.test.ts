// A grant's `app` capabilities reach the destination devices' packet filters as Tailscale's
// CapGrant rules (the sources' addresses, the device's own prefixes, the capabilities as
// written), make sources and destinations peers without opening any traffic, and are refused
// where a name or a value is not what Tailscale takes.

import { describe, expect, it } from 'vitest';
import {
  canReach,
  computePeerMaps,
  type PolicyDevice,
  type PolicyUser,
  packetFilter,
  packetFilterJson,
  validatePolicy,
} from '../../src/policy/index.js';
import { compiledPolicy } from './generate.js';
import { dev, errorsOf, expectErrorAt, policy } from './helpers.js';

const users: PolicyUser[] = [
  { login: 'ana@example.com', role: 'member' },
  { login: 'bo@example.com', role: 'member' },
];
const ana1 = dev('ana1', 'ana@example.com', [], 1);
const ana2 = dev('ana2', 'ana@example.com', [], 2);
const bo1 = dev('bo1', 'bo@example.com', [], 3);
const web = dev('web', null, ['tag:web'], 4);
const router = dev('router', null, ['tag:router'], 5, ['10.1.0.0/16']);
const devices = [ana1, ana2, bo1, web, router];

const text = policy({
  tagOwners: '{ "tag:web": [], "tag:router": [] }',
  grants: `[
    { "src": ["ana@example.com"], "dst": ["tag:web"], "app": { "example.com/cap/admin": [{ "role": "owner" }, {}] } },
    { "src": ["bo@example.com"], "dst": ["tag:web"], "ip": ["tcp:443"], "app": { "example.com/cap/read": [{}] } },
    { "src": ["ana@example.com"], "dst": ["autogroup:self"], "app": { "example.com/cap/self": [{}] } },
    { "src": ["tag:web"], "dst": ["10.1.2.0/24"], "app": { "example.com/cap/subnet": [{ "n": 1 }] } },
  ]`,
});

describe('app grants in the packet filter', () => {
  const compiled = compiledPolicy(text);
  const filter = (viewer: PolicyDevice) => packetFilter(compiled, viewer, devices, users);

  it('give each destination a CapGrant for the sources, with its own prefixes and the capabilities', () => {
    expect(filter(web)).toEqual([
      {
        SrcIPs: ['100.64.0.1', '100.64.0.2', 'fd7a:115c:a1e0::1', 'fd7a:115c:a1e0::2'],
        CapGrant: [
          {
            Dsts: ['100.64.0.4/32', 'fd7a:115c:a1e0::4/128'],
            CapMap: { 'example.com/cap/admin': [{ role: 'owner' }, {}] },
          },
        ],
      },
      // A grant with `ip` and `app`: its ports, then its capabilities, for the same sources.
      {
        SrcIPs: ['100.64.0.3', 'fd7a:115c:a1e0::3'],
        DstPorts: [
          { IP: '100.64.0.4', Ports: { First: 443, Last: 443 } },
          { IP: 'fd7a:115c:a1e0::4', Ports: { First: 443, Last: 443 } },
        ],
        IPProto: [6],
      },
      {
        SrcIPs: ['100.64.0.3', 'fd7a:115c:a1e0::3'],
        CapGrant: [{ Dsts: ['100.64.0.4/32', 'fd7a:115c:a1e0::4/128'], CapMap: { 'example.com/cap/read': [{}] } }],
      },
    ]);
  });

  it('give autogroup:self only the owner’s sources, and a router the prefix it serves', () => {
    expect(filter(ana2)).toEqual([
      {
        SrcIPs: ['100.64.0.1', '100.64.0.2', 'fd7a:115c:a1e0::1', 'fd7a:115c:a1e0::2'],
        CapGrant: [{ Dsts: ['100.64.0.2/32', 'fd7a:115c:a1e0::2/128'], CapMap: { 'example.com/cap/self': [{}] } }],
      },
    ]);
    expect(filter(router)).toEqual([
      {
        SrcIPs: ['100.64.0.4', 'fd7a:115c:a1e0::4'],
        CapGrant: [{ Dsts: ['10.1.2.0/24'], CapMap: { 'example.com/cap/subnet': [{ n: 1 }] } }],
      },
    ]);
  });

  it('narrow a prefix to the device’s addresses inside it, and keep it whole for a route it serves', () => {
    const wide = compiledPolicy(
      policy({
        grants: `[
    { "src": ["bo@example.com"], "dst": ["100.64.0.0/10", "10.0.0.0/8"], "app": { "example.com/cap/wide": [{}] } },
  ]`,
      }),
    );
    const caps = (viewer: PolicyDevice) =>
      packetFilter(wide, viewer, devices, users).flatMap((r) => ('CapGrant' in r ? r.CapGrant[0].Dsts : []));
    expect(caps(web)).toEqual(['100.64.0.4/32']);
    expect(caps(router)).toEqual(['100.64.0.5/32', '10.0.0.0/8']);
  });

  it('give nothing to a device no grant names', () => {
    // bo1 is a user's device: autogroup:self names it, but no source of the grant is bo's.
    expect(filter(bo1)).toEqual([]);
  });

  it('are the same in the JSON shared between devices of a group', () => {
    for (const viewer of devices) {
      expect(JSON.parse(packetFilterJson(compiled, viewer, devices, users)), viewer.id).toEqual(filter(viewer));
    }
  });

  it('make sources and destinations peers without opening any traffic', () => {
    const peers = computePeerMaps(compiled, devices, users);
    expect(peers('web').map((p) => p.id)).toEqual(['ana1', 'ana2', 'bo1', 'router']);
    expect(peers('ana1').map((p) => p.id)).toEqual(['ana2', 'web']);
    for (const proto of ['tcp', 'udp', 'icmp'] as const) {
      expect(canReach(compiled, ana1, web, 443, proto, users)).toBe(false);
      expect(canReach(compiled, ana1, ana2, 22, proto, users)).toBe(false);
    }
    expect(canReach(compiled, bo1, web, 443, 'tcp', users)).toBe(true);
  });
});

describe('companions of drive and relay grants', () => {
  const compiled = compiledPolicy(
    policy({
      tagOwners: '{ "tag:web": [], "tag:router": [] }',
      grants: `[
    { "src": ["ana@example.com"], "dst": ["tag:web"], "app": { "tailscale.com/cap/drive": [{ "shares": ["*"], "access": "rw" }] } },
    { "src": ["tag:web"], "dst": ["tag:router"], "app": { "tailscale.com/cap/relay": [{}] } },
  ]`,
    }),
  );
  const filter = (viewer: PolicyDevice) => packetFilter(compiled, viewer, devices, users);

  it('tell each source, for the destinations’ addresses, that they share drives or relay', () => {
    const sharer = {
      SrcIPs: ['100.64.0.4', 'fd7a:115c:a1e0::4'],
      CapGrant: [
        { Dsts: ['100.64.0.1/32', 'fd7a:115c:a1e0::1/128'], CapMap: { 'tailscale.com/cap/drive-sharer': null } },
      ],
    };
    expect(filter(ana1)).toEqual([sharer]);
    expect(filter(web)).toEqual([
      {
        SrcIPs: ['100.64.0.1', '100.64.0.2', 'fd7a:115c:a1e0::1', 'fd7a:115c:a1e0::2'],
        CapGrant: [
          {
            Dsts: ['100.64.0.4/32', 'fd7a:115c:a1e0::4/128'],
            CapMap: { 'tailscale.com/cap/drive': [{ shares: ['*'], access: 'rw' }] },
          },
        ],
      },
      {
        SrcIPs: ['100.64.0.5', 'fd7a:115c:a1e0::5'],
        CapGrant: [
          { Dsts: ['100.64.0.4/32', 'fd7a:115c:a1e0::4/128'], CapMap: { 'tailscale.com/cap/relay-target': null } },
        ],
      },
    ]);
    expect(filter(bo1)).toEqual([]);
    for (const viewer of devices) {
      expect(JSON.parse(packetFilterJson(compiled, viewer, devices, users)), viewer.id).toEqual(filter(viewer));
    }
  });
});

describe('app grant validation', () => {
  it('takes capabilities of any domain and the tailscale.com ones a policy may grant', () => {
    const ok = policy({
      grants: `[
    { "src": ["*"], "dst": ["*"], "app": { "tailscale.com/cap/drive": [{ "shares": ["docs"], "access": "ro" }] } },
    { "src": ["*"], "dst": ["*"], "app": { "example.com/cap/foo": [{ "nested": { "list": [1, "two", null] } }] } },
  ]`,
    });
    expect(validatePolicy(ok).errors).toEqual([]);
  });

  it('reports each bad name or value at the token that makes it', () => {
    const bad = policy({
      grants: `[
    { "src": ["*"], "dst": ["*"], "app": { "https://example.com/cap/x": [{}] } },
    { "src": ["*"], "dst": ["*"], "app": { "no-domain": [{}] } },
    { "src": ["*"], "dst": ["*"], "app": { "tailscale.com/cap/ingress": [{}] } },
    { "src": ["*"], "dst": ["*"], "app": { "example.com/cap/obj": {} } },
    { "src": ["*"], "dst": ["*"], "app": { "example.com/cap/str": ["value"] } },
  ]`,
    });
    const errors = errorsOf(bad);
    expectErrorAt(errors, bad, '"https://example.com/cap/x"', 'must have the form {domain}/{path}');
    expectErrorAt(errors, bad, '"no-domain"', 'must have the form {domain}/{path}');
    expectErrorAt(errors, bad, '"tailscale.com/cap/ingress"', 'in the tailscale.com domain');
    expectErrorAt(errors, bad, '{} }', 'must be an array of JSON objects');
    expectErrorAt(errors, bad, '"value"', 'must hold only JSON objects');
    expect(errors).toHaveLength(5);
  });
});

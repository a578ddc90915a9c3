// Grants: the same rules as `acls`, spelled the newer way. Every acl rule rewritten as grants
// must give the same peers, allowedIPs and answers; grant-specific mistakes are reported where
// they are written.

import { describe, expect, it } from 'vitest';
import { canReach, computePeerMaps, validatePolicy } from '../../src/policy/index.js';
import { compiledPolicy, prng, randomNetwork } from './generate.js';
import { errorsOf, expectErrorAt, policy } from './helpers.js';
import { type RawPolicy, splitDst } from './reference.js';

/** One grant per destination of each rule: dst without ports, the ports (and proto) in `ip`. */
function asGrants(p: RawPolicy) {
  return p.acls.flatMap((rule) =>
    rule.dst.map((entry) => {
      const { sel, ports } = splitDst(entry);
      return { src: rule.src, dst: [sel], ip: [rule.proto ? `${rule.proto}:${ports}` : ports] };
    }),
  );
}

describe('grants mean what acls mean', () => {
  it('give the same peers, allowedIPs and canReach answers on random networks', () => {
    for (let seed = 1; seed <= 80; seed++) {
      const net = randomNetwork(seed);
      const { acls, ...rest } = net.policy;
      const viaAcls = compiledPolicy(JSON.stringify(net.policy));
      const viaGrants = compiledPolicy(JSON.stringify({ ...rest, grants: asGrants(net.policy) }));
      const a = computePeerMaps(viaAcls, net.devices, net.users);
      const g = computePeerMaps(viaGrants, net.devices, net.users);
      for (const d of net.devices) expect(g(d.id), `seed ${seed} ${d.id}`).toEqual(a(d.id));
      const r = prng(seed);
      for (let i = 0; i < 40; i++) {
        const [x, y] = [r.pick(net.devices), r.pick(net.devices)];
        const port = r.pick([22, 80, 443, 1500]);
        const proto = r.pick(['tcp', 'udp', 'icmp', 'sctp', '47'] as const);
        expect(canReach(viaGrants, x, y, port, proto, net.users), `seed ${seed}`).toBe(
          canReach(viaAcls, x, y, port, proto, net.users),
        );
      }
    }
  });

  it('open several protocols and ports per grant, and run the policy tests against them', () => {
    const text = policy({
      tagOwners: '{ "tag:dns": [], "tag:web": [] }',
      grants: `[
    { "src": ["autogroup:member"], "dst": ["tag:dns", "tag:web"], "ip": ["udp:53", "tcp:443", "icmp:*"] },
    { "src": ["tag:web"], "dst": ["tag:dns"], "ip": ["53"], "app": { "example.com/cap/dns": [{}] } },
    { "src": ["autogroup:member"], "dst": ["tag:web"], "app": { "example.com/cap/admin": [{}] } },
  ]`,
      tests: `[
    { "src": "ana@example.com", "accept": ["tag:dns:443", "tag:web:443"], "deny": ["tag:web:80"] },
    { "src": "ana@example.com", "proto": "udp", "accept": ["tag:dns:53"], "deny": ["tag:dns:443"] },
    { "src": "tag:web", "proto": "sctp", "accept": ["tag:dns:53"], "deny": ["tag:dns:54"] },
    { "src": "tag:dns", "deny": ["tag:web:*"] },
  ]`,
    });
    expect(validatePolicy(text).errors).toEqual([]);
  });
});

describe('grant validation', () => {
  it('reports every mistake at the token that makes it', () => {
    const text = policy({
      tagOwners: '{ "tag:web": [] }',
      hosts: '{ "db": "10.0.0.5" }',
      grants: `[
    { "src": ["*"], "dst": ["tag:web:443"], "ip": ["tcp:443"] },
    { "src": ["*"], "dst": ["tag:web"], "ip": ["tcp:443"], "via": ["tag:web"] },
    { "src": ["*"], "dst": ["db"], "ip": ["icmp:22", "bogus:1", "99999", "icmp", "tcp:"] },
    { "src": ["*"], "dst": ["tag:web"] },
    { "src": ["*"], "dst": ["tag:web"], "app": [] },
    { "src": ["tag:web"], "dst": ["autogroup:self"], "ip": ["*"] },
    { "src": ["autogroup:internet"], "dst": ["tag:nope"], "ip": ["*"], "users": [] },
    { "dst": ["autogroup:internet"], "ip": ["*"] },
  ]`,
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"tag:web:443"', 'has a port: a grant\'s dst names devices, its ports go in "ip"');
    expectErrorAt(errors, text, '["tag:web"]', '"via" is not supported', 1, '"via"');
    expectErrorAt(errors, text, '"icmp:22"', 'icmp has no ports');
    expectErrorAt(errors, text, '"bogus:1"', 'proto "bogus" is not supported');
    expectErrorAt(errors, text, '"99999"', 'invalid port');
    expectErrorAt(errors, text, '"icmp"', 'write "icmp:*"');
    expectErrorAt(errors, text, '"tcp:"', 'missing port');
    expectErrorAt(errors, text, '{ "src": ["*"], "dst": ["tag:web"] }', 'neither "ip" nor "app"');
    expectErrorAt(errors, text, '[] }', '"app" must be an object', 1, '"app"');
    expectErrorAt(
      errors,
      text,
      '"tag:web"',
      'autogroup:self can only be used with users',
      1,
      '["tag:web"], "dst": ["autogroup:self"]',
    );
    expectErrorAt(errors, text, '"autogroup:internet"', 'can only be used in dst');
    expectErrorAt(errors, text, '"tag:nope"', 'tag "tag:nope" is not defined');
    expectErrorAt(errors, text, '"users"', 'unknown field "users" in a grant');
    expectErrorAt(errors, text, '{ "dst": ["autogroup:internet"]', 'grant is missing "src"');
    expect(errors).toHaveLength(14);
  });

  it('refuses a grants section that is not an array', () => {
    const text = policy({ grants: '{}' });
    expectErrorAt(errorsOf(text), text, '{}', '"grants" must be an array');
  });
});

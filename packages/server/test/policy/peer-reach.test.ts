// peerReachKey: equal keys must mean equal peer maps (a view keeps its peer map across a policy
// change on that word, netmap.cache.ts), and what only filters read must not move the key.

import { describe, expect, it } from 'vitest';
import { computePeerMaps, type PolicyDevice, type PolicyUser, peerReachKey } from '../../src/policy/index.js';
import { compiledPolicy, randomNetwork } from './generate.js';
import type { RawPolicy } from './reference.js';

const CASES = 150;

/** Every device's peers, as the map lists them. */
function peersOf(text: string, devices: PolicyDevice[], users: PolicyUser[]) {
  const peers = computePeerMaps(compiledPolicy(text), devices, users);
  return devices.map((d) => peers(d.id));
}

/** The policy with every destination's ports moved and TCP rules made UDP: no peer changes. */
function otherPorts(policy: RawPolicy): RawPolicy {
  return {
    ...policy,
    acls: policy.acls.map((rule) =>
      rule.proto === 'icmp'
        ? rule
        : { ...rule, proto: 'udp', dst: rule.dst.map((d) => d.replace(/:[^:\]]*$/, ':8443')) },
    ),
  };
}

describe('peerReachKey', () => {
  it(`is the same for a policy that moved only ports and protocols, whose peer maps are the same (${CASES} networks)`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const net = randomNetwork(seed);
      const a = JSON.stringify(net.policy);
      const b = JSON.stringify(otherPorts(net.policy));
      expect(peerReachKey(compiledPolicy(b)), `seed ${seed}\n${a}\n${b}`).toBe(peerReachKey(compiledPolicy(a)));
      expect(peersOf(b, net.devices, net.users)).toEqual(peersOf(a, net.devices, net.users));
    }
  }, 120_000);

  it(`differs wherever the peer maps of one network under two policies differ (${CASES} pairs)`, () => {
    let differing = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const net = randomNetwork(seed);
      const other = JSON.stringify(randomNetwork(seed + 10_000).policy);
      const own = JSON.stringify(net.policy);
      const same = peerReachKey(compiledPolicy(own)) === peerReachKey(compiledPolicy(other));
      const samePeers =
        JSON.stringify(peersOf(own, net.devices, net.users)) === JSON.stringify(peersOf(other, net.devices, net.users));
      if (!samePeers) differing++;
      if (same) expect(samePeers, `seed ${seed}\n${own}\n${other}`).toBe(true);
    }
    // The pairs must mostly differ for the check above to say anything.
    expect(differing).toBeGreaterThan(CASES / 2);
  }, 120_000);

  it('moves when a group gains a member, a rule a source, or a host another address', () => {
    const policy = (members: string, src: string, host: string) => `{
      "groups": { "group:eng": [${members}] },
      "hosts": { "db": "${host}" },
      "tagOwners": { "tag:web": ["group:eng"] },
      "acls": [
        { "action": "accept", "src": [${src}], "dst": ["tag:web:443"] },
        { "action": "accept", "src": ["tag:web"], "dst": ["db:5432"] },
      ],
      "ssh": [{ "action": "accept", "src": ["group:eng"], "dst": ["tag:web"], "users": ["root"] }],
    }`;
    const key = (text: string) => peerReachKey(compiledPolicy(text));
    const base = key(policy('"ana@example.com"', '"group:eng"', '10.0.0.5'));
    expect(key(policy('"ana@example.com", "bo@example.com"', '"group:eng"', '10.0.0.5'))).not.toBe(base);
    expect(key(policy('"ana@example.com"', '"group:eng", "bo@example.com"', '10.0.0.5'))).not.toBe(base);
    expect(key(policy('"ana@example.com"', '"group:eng"', '10.0.0.6'))).not.toBe(base);
    // SSH rules and tag owners are not what peer maps read.
    const noSsh = policy('"ana@example.com"', '"group:eng"', '10.0.0.5').replace(/"ssh": \[.*\],/, '');
    expect(key(noSsh)).toBe(base);
  });
});

// The engine against the naive reference on random networks and policies.

import { describe, expect, it } from 'vitest';
import { canReach, computePeerMaps, type PolicyDevice } from '../../src/policy/index.js';
import { compiledPolicy, prng, randomNetwork } from './generate.js';
import { refCanReach, refPeers } from './reference.js';

const CASES = 200;

describe('computePeerMaps matches the pairwise reference', () => {
  it(`on ${CASES} random networks`, () => {
    for (let seed = 1; seed <= CASES; seed++) {
      const net = randomNetwork(seed);
      const text = JSON.stringify(net.policy, null, 2);
      const policy = compiledPolicy(text);
      const peers = computePeerMaps(policy, net.devices, net.users);
      for (const d of net.devices) {
        const want = refPeers(net.policy, net.devices, net.users, d);
        expect(peers(d.id), `seed ${seed}, device ${d.id}\n${text}\n${JSON.stringify(net.devices)}`).toEqual(want);
      }
    }
  }, 120_000); // CPU-bound: a loaded machine may need far longer than usual

  it('is symmetric and never lists the device itself', () => {
    for (let seed = 1000; seed < 1050; seed++) {
      const net = randomNetwork(seed);
      const peers = computePeerMaps(compiledPolicy(JSON.stringify(net.policy)), net.devices, net.users);
      const sees = new Map(net.devices.map((d) => [d.id, new Set(peers(d.id).map((p) => p.id))]));
      for (const [id, set] of sees) {
        expect(set.has(id)).toBe(false);
        for (const other of set) expect(sees.get(other)?.has(id)).toBe(true);
      }
    }
  });

  it('returns nothing for an unknown device', () => {
    const net = randomNetwork(7);
    expect(computePeerMaps(compiledPolicy(JSON.stringify(net.policy)), net.devices, net.users)('nope')).toEqual([]);
  });
});

describe('canReach matches the reference', () => {
  it('on random pairs, ports and protocols', () => {
    for (let seed = 1; seed <= 150; seed++) {
      const net = randomNetwork(seed);
      const policy = compiledPolicy(JSON.stringify(net.policy));
      const r = prng(seed * 31);
      for (let i = 0; i < 60; i++) {
        const a: PolicyDevice = r.pick(net.devices);
        const b: PolicyDevice = r.pick(net.devices);
        const port = r.pick([22, 80, 443, 1500, 3000]);
        const proto = r.pick(['tcp', 'udp', 'icmp'] as const);
        expect(canReach(policy, a, b, port, proto, net.users), `seed ${seed} ${a.id}->${b.id}:${port}/${proto}`).toBe(
          refCanReach(net.policy, a, b, port, proto, net.users),
        );
      }
    }
  });
});

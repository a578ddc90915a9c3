// A map's packet filter as JSON (packetFilterJson) is shared between viewers that differ only in
// their addresses: it must be exactly the JSON of the viewer's own packetFilter, for every
// device of random networks, with policies that name addresses (no sharing) and policies that
// do not (shared per identity and map), and still after devices change under the same policy.

import { describe, expect, it } from 'vitest';
import { type PolicyDevice, packetFilter, packetFilterJson } from '../../src/policy/index.js';
import { compiledPolicy, prng, randomNetwork } from './generate.js';

const CASES = 150;

describe('packetFilterJson is the JSON of packetFilter', () => {
  it(`for every device of ${CASES} random networks, before and after devices change`, () => {
    let shared = 0;
    let withoutPrefixes = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const prefixes = seed % 3 === 0;
      const net = randomNetwork(seed, { users: 6, devices: 40, rules: seed % 2 === 0 ? 20 : 6, prefixes });
      const text = JSON.stringify(net.policy, null, 2);
      const policy = compiledPolicy(text);
      if (policy.index.prefixes.length === 0) withoutPrefixes++;
      const pick = prng(seed);
      // As maps hold them: a few groups of devices, each group's members sharing one map (the
      // same array of the same device objects, in the network's order), as members of a group
      // that sees itself do; the odd device alone with its map.
      const maps = [0, 1, 2].map(() => net.devices.filter(() => pick.chance(0.3)));
      const check = (devices: readonly PolicyDevice[]) => {
        for (const viewer of devices) {
          const want = JSON.stringify(packetFilter(policy, viewer, devices, net.users));
          expect(packetFilterJson(policy, viewer, devices, net.users), `seed ${seed}, ${viewer.id}\n${text}`).toBe(
            want,
          );
          if (want !== '[]' && viewer.routes.length === 0 && policy.index.prefixes.length === 0) shared++;
        }
      };
      for (const devices of maps) check(devices);
      for (const viewer of net.devices) check([viewer]);
      // Devices change under the same policy (new objects, as a patched view makes): their
      // maps' filters follow, never a text kept for the devices before.
      const changed = net.devices.map((d) =>
        pick.chance(0.3) ? { ...d, tags: d.tags.length > 0 ? [] : ['tag:t0'], user: d.user } : d,
      );
      const byId = new Map(changed.map((d) => [d.id, d]));
      for (const devices of maps) check(devices.map((d) => byId.get(d.id)!));
    }
    // Not vacuous: most policies name no address, and many filters came from a shared text.
    expect(withoutPrefixes).toBeGreaterThan(CASES / 2);
    expect(shared).toBeGreaterThan(CASES * 5);
  }, 120_000);
});

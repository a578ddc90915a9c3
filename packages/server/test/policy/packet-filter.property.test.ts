// The packet filter looks only at the rules whose dst can name the device (compiled indexes):
// it must give exactly what scanning every rule of the policy gives, for every device of
// random networks and policies (identities, groups, tags, hosts, prefixes, routes,
// autogroup:self, protocols).

import { describe, expect, it } from 'vitest';
import {
  type CompiledPolicy,
  type FilterRule,
  type PolicyDevice,
  type PolicyUser,
  packetFilter,
} from '../../src/policy/index.js';
import { deviceSubject, matchesSelector, roleMap } from '../../src/policy/subjects.js';
import type { CompiledDst, Selector } from '../../src/policy/types.js';
import { compiledPolicy, prng, randomNetwork } from './generate.js';

const CASES = 150;

const bare = (address: string): string => address.replace(/\/(32|128)$/, '');

/**
 * The straightforward filter: every rule of the policy, every dst entry matched against the
 * viewer, entries of a rule grouped by (autogroup:self or not, protocols) in first-seen order.
 */
function scannedFilter(
  policy: CompiledPolicy,
  viewer: PolicyDevice,
  devices: readonly PolicyDevice[],
  users: readonly PolicyUser[],
): FilterRule[] {
  const roles = roleMap(users);
  const me = deviceSubject(policy, viewer, roles);
  const own = viewer.addresses.map(bare);
  const opened = (d: CompiledDst): string[] => {
    switch (d.sel.kind) {
      case 'all':
        return ['*'];
      case 'internet':
        return [];
      case 'self':
        return me.owner === null ? [] : own;
      case 'prefix':
        return matchesSelector(d.sel, me, 'overlap') ? [d.sel.prefix.text] : [];
      default:
        return matchesSelector(d.sel, me, 'overlap') ? own : [];
    }
  };
  const admitted = (src: readonly Selector[], self: boolean): string[] => {
    if (!self && src.some((sel) => sel.kind === 'all')) return ['*'];
    const ips = new Set(self ? [] : src.flatMap((sel) => (sel.kind === 'prefix' ? [sel.prefix.text] : [])));
    for (const device of devices) {
      const subject = deviceSubject(policy, device, roles);
      if (self && (me.owner === null || subject.owner !== me.owner)) continue;
      if (src.some((sel) => (self || sel.kind !== 'prefix') && matchesSelector(sel, subject, 'overlap'))) {
        for (const a of device.addresses) ips.add(bare(a));
      }
    }
    return [...ips].sort();
  };
  return policy.rules.flatMap((rule) => {
    const keys: string[] = [];
    const entries = rule.dst.flatMap((d) => {
      const ips = opened(d);
      const key = `${d.sel.kind === 'self'}|${d.protos?.join(',') ?? '*'}`;
      if (ips.length > 0 && !keys.includes(key)) keys.push(key);
      return ips.map((IP) => ({ key, d, IP }));
    });
    return keys.flatMap((key): FilterRule[] => {
      const mine = entries.filter((e) => e.key === key);
      const { d } = mine[0];
      const SrcIPs = admitted(rule.src, d.sel.kind === 'self');
      if (SrcIPs.length === 0) return [];
      const DstPorts = mine.flatMap(({ d, IP }) => d.ports.map(([First, Last]) => ({ IP, Ports: { First, Last } })));
      return [{ SrcIPs, DstPorts, ...(d.protos && { IPProto: [...d.protos] }) }];
    });
  });
}

describe('packetFilter matches a scan of every rule', () => {
  it(`for every device of ${CASES} random networks`, () => {
    let nonEmpty = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const net = randomNetwork(seed, { users: 8, devices: 40, rules: seed % 2 === 0 ? 30 : 8 });
      const text = JSON.stringify(net.policy, null, 2);
      const policy = compiledPolicy(text);
      // As a map holds them: some of the network (the viewer's peers), in the network's order.
      const pick = prng(seed);
      const inMap = net.devices.filter(() => pick.chance(0.6));
      for (const viewer of net.devices) {
        const devices = inMap.includes(viewer) ? inMap : [viewer, ...inMap];
        const want = scannedFilter(policy, viewer, devices, net.users);
        if (want.length > 0) nonEmpty++;
        expect(packetFilter(policy, viewer, devices, net.users), `seed ${seed}, device ${viewer.id}\n${text}`).toEqual(
          want,
        );
      }
    }
    // The generated networks open something on most devices: the comparison is not vacuous.
    expect(nonEmpty).toBeGreaterThan(CASES * 10);
  }, 120_000);
});

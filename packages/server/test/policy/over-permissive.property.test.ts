// Over-permissive means the same thing however it is spelled: fast-check writes the same
// meaning many ways (selectors, host aliases, split prefixes and port ranges, acls or grants,
// autoApprovers routes or exitNode) and the verdict must not depend on the spelling.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { validatePolicy } from '../../src/policy/index.js';

// 0.0.0.0/1 holds 100.64.0.0/10, where every device has an address; 128.0.0.0/1 holds none.
const HOSTS = { everything: '0.0.0.0/0', mesh: '100.64.0.0/10', mesh6: 'fd7a:115c:a1e0::/48', half: '128.0.0.0/1' };
const BASE = {
  groups: { 'group:eng': ['ana@example.com'] },
  tagOwners: { 'tag:router': [], 'tag:web': [] },
  hosts: HOSTS,
};

/** Sources that hold every device, and sources that do not, each in several spellings. */
const EVERYONE = [
  ['*'],
  ['autogroup:member', 'autogroup:tagged'],
  ['autogroup:tagged', 'group:eng', 'autogroup:member'],
  ['0.0.0.0/0'],
  ['::/0'],
  ['100.64.0.0/10'],
  ['fd7a:115c:a1e0::/48'],
  ['0.0.0.0/1', '128.0.0.0/1'],
  ['100.64.0.0/11', '100.96.0.0/11'],
  ['everything'],
  ['mesh'],
  ['mesh6', 'tag:web'],
  ['64.0.0.0/2'],
  ['0.0.0.0/1', 'half'],
];
const SOME = [
  ['autogroup:member'],
  ['autogroup:tagged', 'tag:web'],
  ['128.0.0.0/1'],
  ['100.64.0.0/11'],
  ['half', 'group:eng'],
  ['100.64.0.0/11', '100.128.0.0/11'],
  ['fd7a:115c:a1e0::/49'],
];

/** Destination devices, without ports: every device, or not. */
const ALL_DEVICES = EVERYONE.filter((s) => !s.includes('::/0') && !s.some((x) => x.includes(':') && x.includes('/')));
const SOME_DEVICES = [
  ...SOME.filter((s) => !s.some((x) => x.includes('::'))),
  ['autogroup:self'],
  ['autogroup:internet'],
];
/** Port sets: every port, or not. */
const ALL_PORTS = [['*'], ['1-65535'], ['1-1000', '1001-65535'], ['1-443', '22', '444-65535'], ['*', '22']];
const SOME_PORTS = [['22'], ['1-65534'], ['2-65535'], ['1-1000', '1002-65535'], ['80,443']];

interface Spelling {
  src: string[];
  dst: string[];
  ports: string[];
  grant: boolean;
  proto?: string;
}

function policyOf(s: Spelling): string {
  if (s.grant) {
    const ip = s.proto ? s.ports.map((p) => `${s.proto}:${p}`) : s.ports;
    return JSON.stringify({ ...BASE, grants: [{ src: s.src, dst: s.dst, ip }] });
  }
  const dst = s.dst.flatMap((d) => s.ports.map((p) => `${d}:${p}`));
  const rule = { action: 'accept', src: s.src, dst, ...(s.proto ? { proto: s.proto } : {}) };
  return JSON.stringify({ ...BASE, acls: [rule] });
}

const overPermissive = (text: string) => {
  const r = validatePolicy(text);
  const broad = r.errors.filter((e) => e.msg.startsWith('over-permissive'));
  // Nothing else may be wrong with a generated policy.
  expect(r.errors.length, JSON.stringify(r.errors)).toBe(broad.length);
  if (broad.length > 0) {
    expect(broad[0].line).toBeGreaterThan(0);
    expect(broad[0].column).toBeGreaterThan(0);
  }
  return broad.length > 0;
};

const spelling = (src: string[][], dst: string[][], ports: string[][]) =>
  fc.record({
    src: fc.constantFrom(...src),
    dst: fc.constantFrom(...dst),
    ports: fc.constantFrom(...ports),
    grant: fc.boolean(),
  });

describe('an over-permissive rule, however it is spelled', () => {
  it('is refused when sources and destinations hold every device on every port', () => {
    fc.assert(
      fc.property(spelling(EVERYONE, ALL_DEVICES, ALL_PORTS), spelling(EVERYONE, ALL_DEVICES, ALL_PORTS), (a, b) => {
        expect(overPermissive(policyOf(a))).toBe(true);
        expect(overPermissive(policyOf(b))).toBe(overPermissive(policyOf(a)));
      }),
      { numRuns: 300 },
    );
  });

  it('is accepted when any part is narrower: sources, destinations, ports or protocol', () => {
    // autogroup:self takes only users and what stands for them as sources: keep those and add
    // a group, which cannot change the verdict.
    const USERS = ['*', 'autogroup:member', 'group:eng'];
    const withUsers = (s: Spelling) => ({
      ...s,
      src: [...new Set([...s.src.filter((x) => !s.dst.includes('autogroup:self') || USERS.includes(x)), 'group:eng'])],
    });
    const narrower = fc.oneof(
      spelling(SOME, [...ALL_DEVICES, ...SOME_DEVICES], [...ALL_PORTS, ...SOME_PORTS]).map(withUsers),
      spelling(EVERYONE, SOME_DEVICES, [...ALL_PORTS, ...SOME_PORTS]).map(withUsers),
      spelling(EVERYONE, ALL_DEVICES, SOME_PORTS),
      spelling(EVERYONE, ALL_DEVICES, ALL_PORTS).map((s) => ({ ...s, proto: 'tcp' })),
    );
    fc.assert(
      fc.property(narrower, (s) => {
        expect(overPermissive(policyOf(s)), policyOf(s)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});

/** autoApprovers spellings that let every user get all of IPv4 or IPv6 approved (an exit node), or not. */
const BROAD_APPROVALS = [
  { routes: { '0.0.0.0/0': ['*'] } },
  { routes: { '0.0.0.0/0': ['autogroup:member', 'autogroup:tagged'] } },
  { routes: { '0.0.0.0/1': ['*'], '128.0.0.0/1': ['*'] } },
  { routes: { '0.0.0.0/1': ['autogroup:tagged', 'autogroup:member'], '128.0.0.0/1': ['*'] } },
  {
    routes: {
      '0.0.0.0/0': ['autogroup:member'],
      '0.0.0.0/1': ['autogroup:tagged'],
      '128.0.0.0/1': ['autogroup:tagged'],
    },
  },
  { routes: { '::/1': ['*'], '8000::/1': ['*'] } },
  { exitNode: ['*'] },
  { exitNode: ['autogroup:member', 'autogroup:tagged'] },
  { exitNode: ['autogroup:member'] },
  { routes: { '0.0.0.0/0': ['autogroup:member'] } },
  { routes: { '::/1': ['autogroup:member'], '8000::/1': ['*', 'tag:router'] } },
];
const NARROW_APPROVALS = [
  { routes: { '0.0.0.0/1': ['*'] } },
  { routes: { '0.0.0.0/0': ['tag:router'], '10.0.0.0/8': ['*'] } },
  { routes: { '0.0.0.0/1': ['autogroup:member'], '128.0.0.0/1': ['autogroup:tagged'] } },
  { routes: { '0.0.0.0/0': ['autogroup:tagged', 'group:eng'] } },
  { exitNode: ['autogroup:tagged'] },
  { exitNode: ['tag:router', 'group:eng', 'autogroup:admin'] },
  { exitNode: ['autogroup:tagged'], routes: { '0.0.0.0/1': ['autogroup:member'] } },
];

describe('over-permissive autoApprovers, however they are spelled', () => {
  const verdict = (a: object) => overPermissive(JSON.stringify({ ...BASE, autoApprovers: a }));

  it('give the same verdict to every spelling of the same meaning', () => {
    fc.assert(
      fc.property(fc.constantFrom(...BROAD_APPROVALS), fc.constantFrom(...NARROW_APPROVALS), (broad, narrow) => {
        expect(verdict(broad), JSON.stringify(broad)).toBe(true);
        expect(verdict(narrow), JSON.stringify(narrow)).toBe(false);
      }),
      { numRuns: 100 },
    );
  });
});

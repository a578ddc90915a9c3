// Every kind of validation error, each at the exact line and column of the offending token.

import { TAG_RE } from '@warren/contract';
import { describe, expect, it } from 'vitest';
import { validatePolicy } from '../../src/policy/index.js';
import { errorsOf, expectErrorAt, policy } from './helpers.js';

const groups = '{ "group:eng": ["ana@example.com", "bo@example.com"] }';
const tagOwners = '{ "tag:server": ["group:eng"], "tag:router": ["autogroup:admin"] }';
const hosts = '{ "db": "10.0.0.5", "lab": "10.1.0.0/16", "v6": "fd7a:115c:a1e0::/48" }';
const base = (extra: Record<string, string>) => policy({ groups, tagOwners, hosts, ...extra });

describe('document shape', () => {
  it('requires an object at the top', () => {
    expect(errorsOf('[]')).toEqual([{ line: 1, column: 1, msg: 'the policy must be an object' }]);
  });

  it('rejects unknown sections at their key', () => {
    const text = '{\n  "groups": {},\n  "policies": {},\n}';
    expect(errorsOf(text)).toEqual([
      {
        line: 3,
        column: 3,
        msg: 'unknown section "policies" (expected one of groups, tagOwners, hosts, acls, grants, autoApprovers, ssh, tests, sshTests)',
      },
    ]);
  });

  it('rejects sections of the wrong type at their value', () => {
    const text = policy({
      groups: '[]',
      tagOwners: '"x"',
      hosts: '{ "db": 5 }',
      acls: '{}',
      tests: '{}',
      autoApprovers: '[]',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '[]', '"groups" must be an object');
    expectErrorAt(errors, text, '"x"', '"tagOwners" must be an object');
    expectErrorAt(errors, text, '5', 'host "db" must be a string');
    expectErrorAt(errors, text, '{}', '"acls" must be an array of rules');
    expectErrorAt(errors, text, '{}', '"tests" must be an array', 2);
    expectErrorAt(errors, text, '[]', '"autoApprovers" must be an object', 2);
    expect(errors).toHaveLength(6);
  });
});

describe('groups', () => {
  it('rejects nested groups, self-reference, non-logins and bad names', () => {
    const text = policy({
      groups: '{ "group:a": ["ana@example.com", "group:b", "group:a", "bob", 7], "group:b": [], "group:x y": [] }',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"group:b"', 'group "group:a" contains group "group:b": groups hold login names only');
    expectErrorAt(errors, text, '"group:a"', 'group "group:a" contains itself', 2);
    expectErrorAt(errors, text, '"bob"', 'member "bob" is not a login name');
    expectErrorAt(errors, text, '7', 'group "group:a" must hold only strings');
    expectErrorAt(errors, text, '"group:x y"', 'invalid group name "group:x y"');
    expect(errors).toHaveLength(5);
  });
});

describe('references', () => {
  it('names every undefined group, tag and host where it is used', () => {
    const text = base({
      acls: `[
    { "action": "accept", "src": ["group:ops", "tag:ghost"], "dst": ["nowhere:22", "tag:ghost:*"] },
  ]`,
      autoApprovers: '{ "routes": { "10.0.0.0/8": ["group:ops2"] } }',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"group:ops"', 'group "group:ops" is not defined');
    expectErrorAt(errors, text, '"tag:ghost"', 'tag "tag:ghost" is not defined in tagOwners');
    expectErrorAt(errors, text, '"nowhere:22"', 'host "nowhere" is not defined');
    expectErrorAt(errors, text, '"tag:ghost:*"', 'tag "tag:ghost" is not defined in tagOwners');
    expectErrorAt(errors, text, '"group:ops2"', 'group "group:ops2" is not defined');
    expect(errors).toHaveLength(5);
  });

  it('checks tag syntax in tagOwners keys and in selectors', () => {
    const text = policy({
      tagOwners: '{ "tag:Web": [], "tag:-x": [], "tag:ok": ["tag:ok2", "tag:nope", "10.0.0.1", "autogroup:tagged"] }',
      acls: '[{ "action": "accept", "src": ["tag:Bad"], "dst": ["tag:ok:*"] }]',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"tag:Web"', 'invalid tag "tag:Web": tag names are');
    expectErrorAt(errors, text, '"tag:-x"', 'invalid tag "tag:-x"');
    expectErrorAt(errors, text, '"tag:ok2"', 'tag "tag:ok2" is not defined in tagOwners');
    expectErrorAt(errors, text, '"tag:nope"', 'tag "tag:nope" is not defined');
    expectErrorAt(errors, text, '"10.0.0.1"', 'tag owner "10.0.0.1" must be a login name, group, tag');
    expectErrorAt(errors, text, '"autogroup:tagged"', 'tag owner "autogroup:tagged"');
    expectErrorAt(errors, text, '"tag:Bad"', 'invalid tag "tag:Bad"');
    expect(errors).toHaveLength(7);
  });

  it('bounds a tag as devices and auth keys do: 63 characters after "tag:"', () => {
    const longest = `tag:${'a'.repeat(63)}`;
    const tooLong = `tag:${'a'.repeat(64)}`;
    expect(TAG_RE.test(longest) && !TAG_RE.test(tooLong)).toBe(true);
    const text = policy({ tagOwners: `{ "${longest}": [], "${tooLong}": [] }` });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, `"${tooLong}"`, `invalid tag "${tooLong}": tag names are "tag:" then up to 63`);
    expect(errors).toHaveLength(1);
  });

  it('lets tags own tags declared later in the section', () => {
    const text = policy({ tagOwners: '{ "tag:a": ["tag:b"], "tag:b": ["autogroup:member"] }' });
    expect(validatePolicy(text).ok).toBe(true);
  });
});

describe('hosts and addresses', () => {
  it('rejects malformed addresses, prefix lengths, host bits and alias names', () => {
    const text = policy({
      hosts:
        '{ "a": "10.0.0.256", "b": "10.0.0.0/33", "c": "10.0.0.1/24", "d": "fd7a::1/64", "e": "010.0.0.1", "1.2": "10.0.0.1", "f": "db" }',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"10.0.0.256"', 'host "a": invalid IP address "10.0.0.256"');
    expectErrorAt(errors, text, '"10.0.0.0/33"', 'invalid prefix length "33" in "10.0.0.0/33" (IPv4 allows 0-32)');
    expectErrorAt(errors, text, '"10.0.0.1/24"', '"10.0.0.1/24" is not a network address; did you mean 10.0.0.0/24');
    expectErrorAt(errors, text, '"fd7a::1/64"', 'did you mean fd7a::/64');
    expectErrorAt(errors, text, '"010.0.0.1"', 'invalid IP address "010.0.0.1"');
    expectErrorAt(errors, text, '"1.2"', 'invalid host alias "1.2"');
    expectErrorAt(errors, text, '"db"', 'invalid IP address "db"');
    expect(errors).toHaveLength(7);
  });

  it('rejects malformed CIDRs used directly in rules, without cascading from bad host values', () => {
    const text = policy({
      hosts: '{ "bad": "10.0.0.1/8" }',
      acls: '[{ "action": "accept", "src": ["10.0.0.0/33", "bad", "fd7a::zz"], "dst": ["192.168.1.1/24:22", "bad:22"] }]',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"10.0.0.1/8"', 'did you mean 10.0.0.0/8');
    expectErrorAt(errors, text, '"10.0.0.0/33"', 'invalid prefix length "33"');
    expectErrorAt(errors, text, '"fd7a::zz"', 'invalid IP address "fd7a::zz"');
    expectErrorAt(errors, text, '"192.168.1.1/24:22"', 'did you mean 192.168.1.0/24');
    expect(errors).toHaveLength(4);
  });
});

describe('rules', () => {
  it('rejects unknown fields, missing fields, other actions, protocols and types', () => {
    const text = base({
      acls: `[
    { "action": "deny", "src": ["group:eng"], "dst": ["db:5432"], "users": [] },
    { "src": ["group:eng"] },
    { "action": "accept", "src": "group:eng", "dst": ["db:*"], "proto": "sctcp" },
    "not a rule",
    { "action": 1, "src": [2], "dst": ["db:*"], "proto": 6 },
  ]`,
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"deny"', 'action "deny" is not supported');
    expectErrorAt(errors, text, '"users"', '"users" and "src" both give "src" in a rule: write it once');
    const missing = errors.filter((e) => e.msg.startsWith('rule is missing'));
    expect(missing.map((e) => e.msg)).toEqual(['rule is missing "action"', 'rule is missing "dst"']);
    expectErrorAt(errors, text, '"group:eng", "dst"', '"src" must be an array of strings');
    expectErrorAt(errors, text, '"sctcp"', 'proto "sctcp" is not supported');
    expectErrorAt(errors, text, '"not a rule"', 'a rule must be an object');
    expectErrorAt(errors, text, '1,', '"action" must be a string');
    expectErrorAt(errors, text, '2]', '"src" must hold only strings');
    expectErrorAt(errors, text, '6 }', '"proto" must be a string');
    expect(errors).toHaveLength(10);
  });

  it('points a missing field at the rule itself', () => {
    const text = '{\n  "acls": [\n    { "src": ["*"], "dst": ["*:22"] },\n  ],\n}';
    expect(errorsOf(text)).toEqual([{ line: 3, column: 5, msg: 'rule is missing "action"' }]);
  });

  it('checks destinations: missing port, bad ports, IPv6 forms', () => {
    const text = base({
      acls: `[
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server", "db", "fd7a::1", "db:0", "db:70000", "db:90-80", "db:ssh", "db:22,", "[fd7a::1:22", "autogroup:nope:*"] },
    { "action": "accept", "src": ["group:eng"], "dst": ["fd7a::1:22", "[fd7a::1]:22", "fd7a::/48:*", "[fd7a::/48]:80,443", "v6:8000-8999", "db:22,80-90"] },
  ]`,
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"tag:server"', 'destination "tag:server" has no port: write "tag:server:*"', 2);
    expectErrorAt(errors, text, '"db"', 'destination "db" has no port', 2);
    expectErrorAt(errors, text, '"fd7a::1"', 'write "[fd7a::1]:*"');
    expectErrorAt(errors, text, '"db:0"', 'invalid port "0": ports are 1-65535');
    expectErrorAt(errors, text, '"db:70000"', 'invalid port "70000"');
    expectErrorAt(errors, text, '"db:90-80"', 'invalid port range "90-80": 90 is above 80');
    expectErrorAt(errors, text, '"db:ssh"', 'invalid port "ssh"');
    expectErrorAt(errors, text, '"db:22,"', 'invalid port ""');
    expectErrorAt(errors, text, '"[fd7a::1:22"', 'use "[address]:ports"');
    expectErrorAt(errors, text, '"autogroup:nope:*"', 'unknown autogroup "autogroup:nope"');
    expect(errors).toHaveLength(10);
  });

  it('allows autogroup:self only in dst, after users, groups, autogroup:member/admin or *', () => {
    const text = base({
      acls: `[
    { "action": "accept", "src": ["autogroup:self"], "dst": ["tag:server:22"] },
    { "action": "accept", "src": ["group:eng", "tag:server"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["10.0.0.0/8"], "dst": ["autogroup:self:22"] },
    { "action": "accept", "src": ["tag:server", "db", "autogroup:tagged"], "dst": ["autogroup:self:80"] },
    { "action": "accept", "src": ["*", "autogroup:admin", "10.0.0.0/8"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["group:eng", "ana@example.com", "autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["autogroup:internet"], "dst": ["autogroup:internet:*"] },
  ]`,
    });
    const errors = errorsOf(text);
    const self = 'autogroup:self can only be used with users, groups, autogroup:member, autogroup:admin or "*" in src';
    expectErrorAt(errors, text, '"autogroup:self"', 'autogroup:self can only be used in dst');
    // Each other source of a rule to autogroup:self, where it is written, beside users or not.
    expectErrorAt(errors, text, '"tag:server"', `${self}, and "tag:server" is a tag`, 2);
    expectErrorAt(errors, text, '"10.0.0.0/8"', 'is an address, a CIDR or a host alias', 1);
    expectErrorAt(errors, text, '"tag:server"', 'is a tag', 3);
    expectErrorAt(errors, text, '"db"', '"db" is an address, a CIDR or a host alias', 2);
    expectErrorAt(errors, text, '"autogroup:tagged"', 'is autogroup:tagged');
    expectErrorAt(errors, text, '"10.0.0.0/8"', 'is an address, a CIDR or a host alias', 2);
    expectErrorAt(errors, text, '"autogroup:internet"', 'autogroup:internet can only be used in dst');
    expect(errors).toHaveLength(8);
  });

  it('accepts protocol names and IANA numbers as strings', () => {
    const names = ['tcp', 'udp', 'sctp', '6', '17', '132'];
    const portless = ['icmp', 'ipv6-icmp', 'gre', 'esp', 'ah', 'igmp', '1', '58', '47', '255', '0'];
    for (const proto of [...names, ...portless]) {
      const text = base({
        acls: `[{ "action": "accept", "src": ["group:eng"], "dst": ["db:*"], "proto": "${proto}" }]`,
      });
      expect(validatePolicy(text).errors, proto).toEqual([]);
    }
    for (const proto of portless) {
      const text = base({
        acls: `[{ "action": "accept", "src": ["group:eng"], "dst": ["db:22"], "proto": "${proto}" }]`,
      });
      expectErrorAt(errorsOf(text), text, '"db:22"', 'has no ports');
    }
    for (const proto of ['256', 'TCP', '06', '-1', 'icmpv6', '']) {
      const text = base({
        acls: `[{ "action": "accept", "src": ["group:eng"], "dst": ["db:*"], "proto": "${proto}" }]`,
      });
      expectErrorAt(errorsOf(text), text, `"${proto}" }`, `proto "${proto}" is not supported`);
    }
  });

  it('requires ":*" for icmp rules', () => {
    const text = base({
      acls: '[{ "action": "accept", "src": ["group:eng"], "dst": ["db:22", "lab:*"], "proto": "icmp" }]',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"db:22"', 'icmp has no ports');
    expect(errors).toHaveLength(1);
  });
});

describe('over-permissive policies', () => {
  it('rejects a rule from "*" to "*:*", at the destination', () => {
    const text = '{\n  "acls": [\n    { "action": "accept", "src": ["*"], "dst": ["*:*"] },\n  ],\n}';
    expect(errorsOf(text)).toEqual([
      {
        line: 3,
        column: 49,
        msg: 'over-permissive rule: its sources hold every device and its destinations every port of every device; narrow src, dst or ports',
      },
    ]);
    const narrower =
      '{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:443"] }, { "action": "accept", "src": ["autogroup:member"], "dst": ["*:*"] }] }';
    expect(validatePolicy(narrower).ok).toBe(true);
  });

  it('rejects autoApprovers that let every user approve 0.0.0.0/0, ::/0 or exit nodes, at the first approver', () => {
    const text = base({
      autoApprovers:
        '{ "routes": { "0.0.0.0/0": ["tag:router", "*"], "::/0": ["*"], "10.0.0.0/8": ["*"] }, "exitNode": ["*"] }',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"*"', 'every user could get a device approved for all of 0.0.0.0/0');
    expectErrorAt(errors, text, '"*"', 'every user could get a device approved for all of ::/0', 2);
    expect(errors).toHaveLength(2);
    const exitOnly = base({ autoApprovers: '{ "exitNode": ["autogroup:tagged", "autogroup:member"] }' });
    expectErrorAt(errorsOf(exitOnly), exitOnly, '"autogroup:member"', 'all of 0.0.0.0/0 and ::/0');
    expect(validatePolicy(base({ autoApprovers: '{ "exitNode": ["autogroup:tagged"] }' })).ok).toBe(true);
  });
});

describe('autoApprovers shape', () => {
  it('rejects unknown fields, bad prefixes and approvers that are not identities', () => {
    const text = base({
      autoApprovers:
        '{ "routes": { "10.0.0.0/33": ["tag:router"], "10.1.0.0/16": ["10.0.0.1", "autogroup:self", "db"] }, "exit": [] }',
    });
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"10.0.0.0/33"', 'autoApprovers route "10.0.0.0/33": invalid prefix length');
    expectErrorAt(errors, text, '"10.0.0.1"', 'approver "10.0.0.1" must be');
    expectErrorAt(errors, text, '"autogroup:self"', 'approver "autogroup:self" must be');
    expectErrorAt(errors, text, '"db"', 'approver "db" must be', 2);
    expectErrorAt(errors, text, '"exit"', 'unknown field "exit" in "autoApprovers"');
    expect(errors).toHaveLength(5);
  });
});

describe('one pass', () => {
  it('reports every problem of the document, sorted by line then column', () => {
    const text = `{
  "groups": { "group:a": ["group:b"] },
  "hosts": { "x": "1.2.3.4/8" },
  "acls": [
    { "action": "drop", "src": ["group:zz"], "dst": ["x:99999"] },
  ],
  "tests": [{ "src": "tag:none", "accept": ["x:22"] }],
  "extra": true,
}`;
    const errors = errorsOf(text);
    expect(errors.map((e) => [e.line, e.column])).toEqual([
      [2, 27],
      [3, 19],
      [5, 17],
      [5, 33],
      [5, 54],
      [7, 22],
      [8, 3],
    ]);
    const sorted = [...errors].sort((a, b) => a.line - b.line || a.column - b.column);
    expect(errors).toEqual(sorted);
  });
});

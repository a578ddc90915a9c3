// The policy's own `tests`: evaluated symbolically at validation time.

import { describe, expect, it } from 'vitest';
import { validatePolicy } from '../../src/policy/index.js';
import { errorsOf, expectErrorAt, policy } from './helpers.js';

const sections = {
  groups: '{ "group:eng": ["ana@example.com", "bo@example.com"], "group:ops": ["cy@example.com"], "group:empty": [] }',
  tagOwners: '{ "tag:server": ["group:eng"], "tag:db": ["group:ops"], "tag:router": ["autogroup:admin"] }',
  hosts: '{ "db": "10.0.0.5", "lab": "10.1.0.0/16", "labhost": "10.1.2.3" }',
  acls: `[
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22,443", "db:5432"] },
    { "action": "accept", "src": ["group:ops"], "dst": ["tag:db:*", "lab:*"] },
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
    { "action": "accept", "src": ["tag:server"], "dst": ["tag:db:5432"], "proto": "tcp" },
    { "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] },
    { "action": "accept", "src": ["10.9.0.0/16"], "dst": ["tag:server:80"] },
    { "action": "accept", "src": ["group:empty"], "dst": ["tag:db:1"] },
  ]`,
};
const withTests = (tests: string) => policy({ ...sections, tests });

describe('tests that pass', () => {
  it('accepts a policy whose tests hold', () => {
    const text = withTests(`[
    { "src": "ana@example.com", "accept": ["tag:server:22", "tag:server:443", "db:5432"], "deny": ["tag:server:80", "tag:db:5432", "cy@example.com:22", "bo@example.com:22"] },
    { "src": "group:eng", "accept": ["tag:server:22"], "deny": ["lab:22", "labhost:22"] },
    { "src": "ana@example.com", "accept": ["ana@example.com:3389"] },
    { "src": "cy@example.com", "accept": ["labhost:22", "tag:db:1"], "deny": ["tag:server:22"] },
    { "src": "tag:server", "accept": ["tag:db:5432"], "deny": ["tag:db:5433", "ana@example.com:22"] },
    { "src": "tag:server", "deny": ["tag:db:5432"], "proto": "udp" },
    { "src": "10.9.1.1", "accept": ["tag:server:80"], "deny": ["tag:server:22", "10.9.1.2:80"] },
    { "src": "group:empty", "accept": ["tag:db:1"] },
  ]`);
    const r = validatePolicy(text);
    expect(r.errors).toEqual([]);
  });
});

describe('tests that fail', () => {
  it('reports an accept that no rule accepts, at the target', () => {
    const text = withTests('[{ "src": "ana@example.com", "accept": ["tag:server:80"] }]');
    const errors = errorsOf(text);
    expectErrorAt(
      errors,
      text,
      '"tag:server:80"',
      'test: ana@example.com -> tag:server:80 expected accept, but no rule accepts it',
      1,
      '"tests"',
    );
    expect(errors).toHaveLength(1);
  });

  it('reports a deny that a rule accepts, naming the rule line', () => {
    const text = withTests('[{ "src": "ana@example.com", "deny": ["db:5432", "db:22"] }]');
    const errors = errorsOf(text);
    expectErrorAt(
      errors,
      text,
      '"db:5432"',
      'test: ana@example.com -> db:5432 expected deny, but the rule at line 6 accepts it',
      1,
      '"tests"',
    );
    expect(errors).toHaveLength(1);
  });

  it('treats autogroup:admin as matching no test source', () => {
    const text = withTests('[{ "src": "cy@example.com", "accept": ["tag:server:22"] }]');
    expect(errorsOf(text)[0].msg).toContain('expected accept, but no rule accepts it');
  });

  it('needs a group accept to hold for every member, and a deny for none', () => {
    const text = withTests(`[
    { "src": "group:eng", "accept": ["ana@example.com:22"] },
    { "src": "ana@example.com", "deny": ["group:eng:22"] },
  ]`);
    const errors = errorsOf(text);
    expectErrorAt(
      errors,
      text,
      '"ana@example.com:22"',
      'expected accept, but no rule accepts it (from bo@example.com)',
      1,
      '"tests"',
    );
    expectErrorAt(
      errors,
      text,
      '"group:eng:22"',
      'expected deny, but the rule at line 8 accepts it (to ana@example.com)',
      1,
      '"tests"',
    );
    expect(errors).toHaveLength(2);
  });

  it('fails an accept of a range of addresses, as Tailscale does, and needs a deny to miss all of it', () => {
    const text = withTests(`[
    { "src": "cy@example.com", "accept": ["lab:22", "10.0.0.0/8:22", "10.1.2.3/32:22", "10.1.2.3:22"] },
    { "src": "ana@example.com", "deny": ["10.0.0.0/24:5432", "lab:22"] },
  ]`);
    const errors = errorsOf(text);
    // cy's rule opens all of lab, yet an accept names one host: Tailscale fails the others.
    const range = 'names a range of addresses: an accept checks one host';
    expectErrorAt(errors, text, '"lab:22"', `test accept "lab:22" ${range}`, 1, '"tests"');
    expectErrorAt(errors, text, '"10.0.0.0/8:22"', range, 1, '"tests"');
    expectErrorAt(errors, text, '"10.1.2.3/32:22"', range, 1, '"tests"');
    expectErrorAt(errors, text, '"10.0.0.0/24:5432"', 'expected deny, but the rule at line 6', 1, '"tests"');
    expect(errors).toHaveLength(4);
  });

  it('respects the test protocol', () => {
    const text = withTests('[{ "src": "tag:server", "accept": ["tag:db:5432"], "proto": "udp" }]');
    expect(errorsOf(text)[0].msg).toBe(
      'test: tag:server -> tag:db:5432 over udp expected accept, but no rule accepts it',
    );
  });

  it('reports failing tests together with other errors', () => {
    const text = policy({
      ...sections,
      hosts: '{ "db": "10.0.0.5/8", "lab": "10.1.0.0/16" }',
      tests: '[{ "src": "ana@example.com", "accept": ["tag:server:80"] }]',
    });
    const errors = errorsOf(text);
    expect(errors.map((e) => e.msg)).toEqual([
      expect.stringContaining('did you mean 10.0.0.0/8'),
      expect.stringContaining('expected accept, but no rule accepts it'),
    ]);
  });
});

describe('test entry shape', () => {
  it('rejects bad fields, sources and targets', () => {
    const text = withTests(`[
    { "src": "ana@example.com", "accept": ["*:22", "autogroup:member:22", "tag:server:0-2"], "expect": [] },
    { "accept": ["db:22"] },
    { "src": "*", "deny": "db:22", "proto": "grease" },
    { "src": "autogroup:member" },
    { "src": "group:nope", "accept": ["tag:nope:22"] },
  ]`);
    const errors = errorsOf(text);
    expectErrorAt(
      errors,
      text,
      '"*:22"',
      'test destination "*:22" must be a login name, group, tag, host or IP',
      1,
      '"tests"',
    );
    expectErrorAt(errors, text, '"autogroup:member:22"', 'must be a login name', 1, '"tests"');
    expectErrorAt(errors, text, '"tag:server:0-2"', 'invalid port "0-2"', 1, '"tests"');
    expectErrorAt(errors, text, '"expect"', 'unknown field "expect" in a test', 1, '"tests"');
    expect(errors.some((e) => e.msg === 'test is missing "src"')).toBe(true);
    expectErrorAt(errors, text, '"*"', 'test src "*" must be a login name, group, tag, autogroup', 1, '"tests"');
    expectErrorAt(errors, text, '"db:22"', '"deny" must be an array of strings', 2, '"tests"');
    expectErrorAt(errors, text, '"grease"', 'proto "grease" is not supported', 1, '"tests"');
    expectErrorAt(errors, text, '{ "src": "autogroup:member" }', 'neither "accept" nor "deny"', 1, '"tests"');
    expectErrorAt(errors, text, '"group:nope"', 'group "group:nope" is not defined', 1, '"tests"');
    expectErrorAt(errors, text, '"tag:nope:22"', 'tag "tag:nope" is not defined', 1, '"tests"');
    expect(errors).toHaveLength(11);
  });
});

describe('test targets and ports', () => {
  const rules = `[
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22,80-89", "tag:server:90-100"] },
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:db:*"], "proto": "tcp" },
    { "action": "accept", "src": ["autogroup:member"], "dst": ["tag:web:443"] },
  ]`;
  const check = (tests: string) =>
    validatePolicy(
      policy({
        groups: '{ "group:eng": ["ana@example.com"] }',
        tagOwners: '{ "tag:server": [], "tag:db": [], "tag:web": [], "tag:ci": [] }',
        acls: rules,
        tests,
      }),
    ).errors.map((e) => e.msg);

  it('needs every listed port of an accept target accepted, across rules and entries', () => {
    // The contract keeps every port form in tests (Tailscale fails an accept of several ports).
    expect(check('[{ "src": "ana@example.com", "accept": ["tag:server:22,80-100", "tag:db:*"] }]')).toEqual([]);
    expect(check('[{ "src": "ana@example.com", "accept": ["tag:server:22-23"] }]')).toEqual([
      expect.stringContaining('expected accept, but no rule accepts every port of it'),
    ]);
    expect(check('[{ "src": "ana@example.com", "accept": ["tag:server:*"] }]')).toHaveLength(1);
    // tcp only: udp to the same port is not accepted.
    expect(check('[{ "src": "ana@example.com", "accept": ["tag:db:53"], "proto": "udp" }]')).toEqual([
      expect.stringContaining('expected accept, but no rule accepts it'),
    ]);
  });

  it('needs every listed port of a deny target denied', () => {
    expect(check('[{ "src": "ana@example.com", "deny": ["tag:server:23-79,101"] }]')).toEqual([]);
    expect(check('[{ "src": "ana@example.com", "deny": ["tag:server:1-22"] }]')).toEqual([
      expect.stringContaining('expected deny, but the rule at line'),
    ]);
    expect(check('[{ "src": "ana@example.com", "deny": ["tag:web:*"], "proto": "17" }]')).toHaveLength(1);
  });

  it('takes autogroups as sources: every identity they hold now or could', () => {
    expect(check('[{ "src": "autogroup:member", "accept": ["tag:web:443"], "deny": ["tag:ci:22"] }]')).toEqual([]);
    expect(check('[{ "src": "autogroup:member", "accept": ["tag:server:22"] }]')).toHaveLength(1);
    expect(check('[{ "src": "autogroup:tagged", "deny": ["tag:web:443", "tag:server:*"] }]')).toEqual([]);
  });
});

// The `ssh` section: Tailscale's syntax and restrictions, each problem at its entry, and the
// tailcfg.SSHPolicy each device is sent.

import { describe, expect, it } from 'vitest';
import {
  compilePolicy,
  type PolicyDevice,
  type PolicyUser,
  sshPolicy,
  sshPolicyJson,
  validatePolicy,
} from '../../src/policy/index.js';
import { errorsOf, expectErrorAt, policy } from './helpers.js';

const groups = '{ "group:eng": ["ana@example.com", "bo@example.com"] }';
const tagOwners = '{ "tag:server": ["group:eng"], "tag:ci": ["group:eng"] }';
const hosts = '{ "db": "10.0.0.5" }';
const withSsh = (ssh: string) => policy({ groups, tagOwners, hosts, ssh });

describe('validating ssh rules', () => {
  it('accepts Tailscale’s own shapes', () => {
    const text = withSsh(`[
      { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self"], "users": ["autogroup:nonroot", "root"] },
      { "action": "accept", "src": ["group:eng", "tag:ci"], "dst": ["tag:server", "autogroup:tagged"], "users": ["deploy", "localpart:*@example.com"], "acceptEnv": ["GIT_*", "LANG"] },
      { "action": "accept", "src": ["ana@example.com"], "dst": ["ana@example.com"], "users": ["ana"] },
    ]`);
    const r = validatePolicy(text);
    expect(r.errors).toEqual([]);
  });

  it('requires action, src, dst and users, at the rule', () => {
    const text = withSsh('[\n    {}\n  ]');
    const errors = errorsOf(text);
    for (const field of ['action', 'src', 'dst', 'users']) {
      expect(errors).toContainEqual({ ...lineColumn(text, '{}'), msg: `ssh rule is missing "${field}"` });
    }
  });

  it('refuses unknown fields and actions at their key or value', () => {
    const text = withSsh(
      '[{ "action": "deny", "src": ["group:eng"], "dst": ["tag:server"], "users": ["root"], "ports": [] }]',
    );
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"deny"', 'ssh action "deny" is not supported', 1, '"ssh"');
    expectErrorAt(errors, text, '"ports"', 'unknown field "ports" in an ssh rule', 1, '"ssh"');
  });

  it('takes check rules with a checkPeriod from 1m to 168h, or "always"', () => {
    const check = (period: string) =>
      withSsh(
        `[{ "action": "check", "src": ["group:eng"], "dst": ["tag:server"], "users": ["root"], "checkPeriod": "${period}" }]`,
      );
    for (const period of ['12h', '1h30m', '1m', '168h', 'always'])
      expect(validatePolicy(check(period)).errors).toEqual([]);
    for (const period of ['30s', '169h', '1d', '']) {
      const text = check(period);
      expectErrorAt(errorsOf(text), text, `"${period}"`, 'checkPeriod', 1, '"checkPeriod"');
    }
    const rule = compilePolicy(check('always')).ssh[0];
    expect(rule).toMatchObject({ action: 'check', checkPeriodMs: 0 });
    expect(
      compilePolicy(withSsh('[{ "action": "check", "src": ["group:eng"], "dst": ["tag:server"], "users": ["root"] }]'))
        .ssh[0].checkPeriodMs,
    ).toBe(12 * 3_600_000);
  });

  it('takes identities only as sources', () => {
    const text = withSsh(
      '[{ "action": "accept", "src": ["*", "10.0.0.1", "db", "autogroup:self", "group:nope"], "dst": ["tag:server"], "users": ["root"] }]',
    );
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"*"', 'ssh src "*" is not allowed', 1, '"ssh"');
    expectErrorAt(errors, text, '"10.0.0.1"', 'ssh src "10.0.0.1" is not allowed', 1, '"ssh"');
    expectErrorAt(errors, text, '"db"', 'ssh src "db" is not allowed', 1, '"ssh"');
    expectErrorAt(errors, text, '"autogroup:self"', 'ssh src "autogroup:self" is not allowed', 1, '"ssh"');
    expectErrorAt(errors, text, '"group:nope"', 'group "group:nope" is not defined', 1, '"ssh"');
  });

  it('takes tags, autogroups and users as destinations, never `*`, addresses or groups', () => {
    const text = withSsh(
      '[{ "action": "accept", "src": ["group:eng"], "dst": ["*", "db", "group:eng", "autogroup:internet", "tag:server"], "users": ["root"] }]',
    );
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"*"', 'ssh dst "*" is not allowed', 1, '"ssh"');
    expectErrorAt(errors, text, '"db"', 'ssh dst "db" is not allowed', 1, '"ssh"');
    expectErrorAt(errors, text, '"group:eng"', 'ssh dst "group:eng" is not allowed', 1, '"dst"');
    expectErrorAt(errors, text, '"autogroup:internet"', 'is not allowed', 1, '"ssh"');
    expect(errors).toHaveLength(4);
  });

  it('refuses tagged sources into user-owned devices, at each such destination', () => {
    const text = withSsh(
      '[{ "action": "accept", "src": ["tag:ci"], "dst": ["autogroup:self", "autogroup:member", "ana@example.com", "tag:server"], "users": ["root"] }]',
    );
    const errors = errorsOf(text);
    for (const dst of ['"autogroup:self"', '"autogroup:member"', '"ana@example.com"']) {
      expectErrorAt(errors, text, dst, 'which a tagged source ("tag:ci") may not log in to', 1, '"ssh"');
    }
    expect(errors).toHaveLength(3);
    const tagged = withSsh(
      '[{ "action": "accept", "src": ["autogroup:tagged"], "dst": ["autogroup:self"], "users": ["root"] }]',
    );
    expectErrorAt(errorsOf(tagged), tagged, '"autogroup:self"', 'a tagged source ("autogroup:tagged")', 1, '"ssh"');
  });

  it('lets only a user itself into that user’s devices', () => {
    for (const src of ['"bo@example.com"', '"group:eng"', '"ana@example.com", "bo@example.com"']) {
      const text = withSsh(`[{ "action": "accept", "src": [${src}], "dst": ["ana@example.com"], "users": ["root"] }]`);
      expectErrorAt(errorsOf(text), text, '"ana@example.com"', 'only that user may log in to', 1, '"dst"');
    }
  });

  it('checks users, acceptEnv and checkPeriod', () => {
    const text = withSsh(`[
      { "action": "accept", "src": ["group:eng"], "dst": ["tag:server"], "users": ["*", "autogroup:admin", "localpart:ana", "bad user"], "acceptEnv": ["OK_*", "NO-DASH"], "checkPeriod": "1h" },
      { "action": "accept", "src": ["group:eng"], "dst": ["tag:server"], "users": [] },
    ]`);
    const errors = errorsOf(text);
    expectErrorAt(errors, text, '"*"', 'ssh user "*" is not allowed: use autogroup:nonroot', 1, '"ssh"');
    expectErrorAt(errors, text, '"autogroup:admin"', 'unknown ssh user "autogroup:admin"', 1, '"ssh"');
    expectErrorAt(errors, text, '"localpart:ana"', 'write "localpart:*@domain"', 1, '"ssh"');
    expectErrorAt(errors, text, '"bad user"', 'invalid ssh user "bad user"', 1, '"ssh"');
    expectErrorAt(errors, text, '"NO-DASH"', 'acceptEnv "NO-DASH" is not a variable name', 1, '"ssh"');
    expectErrorAt(errors, text, '"1h"', '"checkPeriod" applies to "check" rules only', 1, '"ssh"');
    expectErrorAt(errors, text, '[]', 'ssh "users" is empty', 1, '"ssh"');
    expect(errors).toHaveLength(7);
  });
});

function lineColumn(text: string, token: string): { line: number; column: number } {
  const at = text.indexOf(token);
  const before = text.slice(0, at);
  return { line: before.split('\n').length, column: at - before.lastIndexOf('\n') };
}

const users: PolicyUser[] = [
  { login: 'ana@example.com', role: 'member' },
  { login: 'bo@example.com', role: 'member' },
  { login: 'cy@other.org', role: 'member' },
];
const dev = (id: string, user: string | null, tags: string[], n: number): PolicyDevice => ({
  id,
  user,
  tags,
  addresses: [`100.64.0.${n}`, `fd7a:115c:a1e0::${n}`],
  routes: [],
});
const ana1 = dev('ana1', 'ana@example.com', [], 1);
const ana2 = dev('ana2', 'ana@example.com', [], 2);
const bo1 = dev('bo1', 'bo@example.com', [], 3);
const cy1 = dev('cy1', 'cy@other.org', [], 4);
const server = dev('server', 'bo@example.com', ['tag:server'], 5);
const ci = dev('ci', 'bo@example.com', ['tag:ci'], 6);
const devices = [ana1, ana2, bo1, cy1, server, ci];
const ips = (...ds: PolicyDevice[]) => ds.flatMap((d) => d.addresses.map((nodeIP) => ({ nodeIP })));
const ACCEPT = {
  accept: true,
  allowAgentForwarding: true,
  allowLocalPortForwarding: true,
  allowRemotePortForwarding: true,
};

describe('the SSHPolicy a device is sent', () => {
  const compiled = compilePolicy(
    withSsh(`[
      { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self"], "users": ["autogroup:nonroot", "root"] },
      { "action": "accept", "src": ["group:eng", "tag:ci"], "dst": ["tag:server"], "users": ["deploy", "localpart:*@example.com"], "acceptEnv": ["GIT_*"] },
    ]`),
  );

  it('a tagged device: the sources of the rules naming its tag, by address, with their users', () => {
    expect(sshPolicy(compiled, server, devices, users)).toEqual({
      rules: [
        {
          principals: ips(ana1, ana2, bo1, ci),
          sshUsers: { root: '', deploy: 'deploy' },
          action: ACCEPT,
          acceptEnv: ['GIT_*'],
        },
        // localpart:*@example.com: each user of that domain logs in as its login's local part.
        { principals: ips(ana1, ana2), sshUsers: { ana: 'ana' }, action: ACCEPT, acceptEnv: ['GIT_*'] },
        { principals: ips(bo1), sshUsers: { bo: 'bo' }, action: ACCEPT, acceptEnv: ['GIT_*'] },
      ],
    });
  });

  it('a user’s device under autogroup:self: its owner’s devices only', () => {
    expect(sshPolicy(compiled, ana1, devices, users)).toEqual({
      rules: [{ principals: ips(ana1, ana2), sshUsers: { '*': '=', root: 'root' }, action: ACCEPT }],
    });
  });

  it('only devices in its map are principals', () => {
    expect(sshPolicy(compiled, ana1, [ana1], users).rules[0].principals).toEqual(ips(ana1));
  });

  it('as JSON, shared between devices of one identity and map, each device’s own policy', () => {
    // Twice over: the second time every text comes from what the first made.
    for (let round = 0; round < 2; round++) {
      for (const d of devices) {
        expect(JSON.parse(sshPolicyJson(compiled, d, devices, users)), d.id).toEqual(
          sshPolicy(compiled, d, devices, users),
        );
      }
    }
    expect(JSON.parse(sshPolicyJson(compiled, ana1, [ana1], users))).toEqual(sshPolicy(compiled, ana1, [ana1], users));
  });

  it('a device no rule names, and a policy without ssh rules: no rules', () => {
    expect(sshPolicy(compiled, ci, devices, users)).toEqual({ rules: [] });
    expect(sshPolicy(compilePolicy(policy({ groups })), server, devices, users)).toEqual({ rules: [] });
  });
});

describe('sshTests', () => {
  const rules = `[
    { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self"], "users": ["autogroup:nonroot"] },
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server"], "users": ["root", "localpart:*@example.com"] },
  ]`;
  const withTests = (tests: string) => policy({ groups, tagOwners, hosts, ssh: rules, sshTests: tests });

  it('pass when the rules do what they say', () => {
    const text = withTests(`[
      { "src": "ana@example.com", "dst": ["tag:server"], "accept": ["root", "ana"], "deny": ["bo", "deploy"] },
      { "src": "ana@example.com", "dst": ["ana@example.com"], "accept": ["ana", "deploy"], "deny": ["root"] },
      { "src": "ana@example.com", "dst": ["bo@example.com"], "deny": ["ana", "root"] },
      { "src": "tag:ci", "dst": ["tag:server"], "deny": ["root"] },
    ]`);
    expect(validatePolicy(text).errors).toEqual([]);
  });

  it('fail at the user whose expectation the rules break, naming the rule', () => {
    const text = withTests(`[
      { "src": "ana@example.com", "dst": ["tag:server"], "accept": ["deploy"], "deny": ["root"], "check": ["ana"] },
    ]`);
    const errors = errorsOf(text);
    expectErrorAt(
      errors,
      text,
      '"deploy"',
      'sshTest: ana@example.com -> tag:server as "deploy" expected accept, but no ssh rule lets it in',
      1,
      '"sshTests"',
    );
    expectErrorAt(errors, text, '"root"', 'expected deny, but the ssh rule at line 7 accepts it', 1, '"sshTests"');
    expectErrorAt(errors, text, '"ana"', 'expected check, but the ssh rule at line 7 accepts it', 1, '"sshTests"');
    expect(errors).toHaveLength(3);
  });

  it('take a login or a tag on either side, and something to check', () => {
    const text = withTests(`[
      { "src": "group:eng", "dst": ["db"], "accept": ["root"] },
      { "src": "ana@example.com", "dst": ["tag:server"] },
    ]`);
    const errors = errorsOf(text);
    expectErrorAt(
      errors,
      text,
      '"group:eng"',
      'ssh test src "group:eng" must be a login name or a tag',
      1,
      '"sshTests"',
    );
    expectErrorAt(errors, text, '"db"', 'ssh test dst "db" must be a login name or a tag', 1, '"sshTests"');
    expectErrorAt(errors, text, '{ "src": "ana', 'ssh test has none of "accept", "check" and "deny"', 1, '"sshTests"');
  });
});

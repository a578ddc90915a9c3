// Policy files brought from Tailscale or Headscale: what they hold is either accepted with the
// meaning it had there, or refused at its token by a problem that names what Warren does not
// support and why (docs/decisions/policy.md, "Policy files from Tailscale and Headscale").
// Each case is a piece of a real policy file, in the spelling Tailscale's documentation and
// Headscale's recorded captures use.

import { describe, expect, it } from 'vitest';
import { compilePolicy, validatePolicy } from '../../src/policy/index.js';
import { errorsOf, expectErrorAt, policy } from './helpers.js';

const groups = '{ "group:eng": ["ana@example.com", "bo@example.com"] }';
const tagOwners = '{ "tag:server": ["group:eng"], "tag:exit": ["autogroup:admin"] }';
const rule = (src: string, dst: string) => `[{ "action": "accept", "src": ["${src}"], "dst": ["${dst}"] }]`;
const acls = rule('group:eng', 'tag:server:22');
const base = (extra: Record<string, string>) => policy({ groups, tagOwners, acls, ...extra });

describe('accepted as Tailscale means it', () => {
  it.each([
    [
      'autogroup:members, the older spelling',
      { ssh: '[{ "action": "check", "src": ["autogroup:members"], "dst": ["autogroup:self"], "users": ["root"] }]' },
    ],
    [
      'a golink grant',
      { grants: '[{ "src": ["group:eng"], "dst": ["tag:server"], "app": { "tailscale.com/cap/golink": [{}] } }]' },
    ],
    [
      'a tailsql grant',
      { grants: '[{ "src": ["group:eng"], "dst": ["tag:server"], "app": { "tailscale.com/cap/tailsql": [{}] } }]' },
    ],
    [
      'optional fields set to null, as Terraform writes unset attributes',
      {
        ssh: '[{ "action": "accept", "src": ["group:eng"], "dst": ["tag:server"], "users": ["root"], "checkPeriod": null, "acceptEnv": null }]',
        grants: '[{ "src": ["group:eng"], "dst": ["tag:server"], "ip": ["22"], "app": null, "via": null }]',
      },
    ],
    [
      'a test of an internet address through autogroup:internet',
      {
        acls: rule('group:eng', 'autogroup:internet:*'),
        tests:
          '[{ "src": "ana@example.com", "accept": ["1.1.1.1:53", "[2606:4700::1111]:443"], "deny": ["10.0.0.1:53", "100.64.0.1:53", "[fd7a:115c:a1e0::1]:22"] }]',
      },
    ],
    ['empty sections Warren does not have', { nodeAttrs: '[]', postures: '{}', ipsets: '{}', derpMap: 'null' }],
    ['settings at their default', { disableIPv4: 'false', randomizeClientPort: 'false', OneCGNATRoute: '""' }],
    ['an empty default posture', { defaultSrcPosture: '[]' }],
  ])('%s', (_name, sections) => {
    const r = validatePolicy(base(sections));
    expect(r.errors).toEqual([]);
  });

  // Tailscale reads its file with Go's JSON: keys in any letter case, and the older field names
  // its early documentation and its older Go client (`ACLDetails`, `ACLRow`, `ACLTest`) write.
  const older = `{
    "Groups": ${groups},
    "tagowners": ${tagOwners},
    "ACLs": [{ "Action": "accept", "Users": ["group:eng"], "Ports": ["tag:server:22"] }],
    "Tests": [{ "User": "ana@example.com", "Allow": ["tag:server:22"], "Deny": ["tag:server:80"] }],
  }`;

  it('reads keys in any letter case and the older field names as the fields they stand for', () => {
    const r = validatePolicy(older);
    expect(r.errors).toEqual([]);
    expect(r.ok && r.policy).toEqual(compilePolicy(base({})));
    expect(r.tests.map((t) => t.passed)).toEqual([true]);
  });

  it('runs the older test fields: a test they fail is reported', () => {
    const failing = older.replace('"Deny": ["tag:server:80"]', '"Deny": ["tag:server:22"]');
    expect(validatePolicy(failing).errors).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('tag:server:22') }),
    ]);
  });
});

describe('one field or section written twice, in two spellings', () => {
  it.each([
    ['a section in two cases', { ACLs: '[]' }, '"ACLs"'],
    [
      'a field in two cases',
      { acls: rule('group:eng', 'tag:server:22').replace('"src"', '"Src": [], "src"') },
      '"src"',
    ],
    [
      'a field and its older name',
      { acls: rule('group:eng', 'tag:server:22').replace('"src"', '"users": [], "src"') },
      '"src"',
    ],
  ])('%s is refused at the second', (_name, sections, token) => {
    const text = base(sections);
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expectErrorAt(errors, text, token, 'write it once');
  });
});

describe('refused at the token, naming the feature', () => {
  // [what, extra sections, token the error sits at, fragment of its message]
  const cases: Array<[string, Record<string, string>, string, string]> = [
    [
      'node attributes (Funnel)',
      { nodeAttrs: '[{ "target": ["autogroup:member"], "attr": ["funnel"] }]' },
      '"nodeAttrs"',
      'node attributes',
    ],
    ['device postures', { postures: `{ "posture:mac": ["node:os == 'macos'"] }` }, '"postures"', 'device posture'],
    ['a default posture', { defaultSrcPosture: '["posture:mac"]' }, '"defaultSrcPosture"', 'device posture'],
    [
      'an IP set in a rule',
      { acls: rule('group:eng', 'ipset:prod:22') },
      '"ipset:prod:22"',
      'IP sets are not supported',
    ],
    [
      "a test counting on its user's role",
      {
        tests: '[{ "src": "ana@example.com", "accept": ["tag:server:22"] }]',
        acls: rule('autogroup:admin', 'tag:server:22'),
      },
      '"tag:server:22"',
      'tests know no roles',
    ],
    [
      'custom node attributes',
      { attrConfig: '{ "custom:tier": { "type": "string" } }' },
      '"attrConfig"',
      'node attributes',
    ],
    [
      "an ssh test counting on its user's role",
      {
        sshTests: '[{ "src": "ana@example.com", "dst": ["tag:server"], "accept": ["root"] }]',
        ssh: '[{ "action": "accept", "src": ["autogroup:admin"], "dst": ["tag:server"], "users": ["root"] }]',
      },
      '"root"',
      'tests know no roles',
    ],
    ['IP sets', { ipsets: '{ "ipset:prod": ["10.0.0.0/8"] }' }, '"ipsets"', 'IP sets'],
    ['a DERP map', { derpMap: '{ "OmitDefaultRegions": true, "Regions": {} }' }, '"derpMap"', 'DERP'],
    ['IPv4 turned off', { disableIPv4: 'true' }, '"disableIPv4"', 'every device has an IPv4 address'],
    ['random client ports', { randomizeClientPort: 'true' }, '"randomizeClientPort"', 'not supported'],
    ['a CGNAT route choice', { OneCGNATRoute: '"mac-always"' }, '"OneCGNATRoute"', 'not supported'],
    [
      "a rule's posture",
      {
        acls: '[{ "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22"], "srcPosture": ["posture:mac"] }]',
      },
      '"srcPosture"',
      'device posture',
    ],
    [
      "a grant's posture",
      { grants: '[{ "src": ["group:eng"], "dst": ["tag:server"], "ip": ["22"], "srcPosture": ["posture:mac"] }]' },
      '"srcPosture"',
      'device posture',
    ],
    [
      "an ssh rule's posture",
      {
        ssh: '[{ "action": "accept", "src": ["group:eng"], "dst": ["tag:server"], "users": ["root"], "srcPosture": ["posture:mac"] }]',
      },
      '"srcPosture"',
      'device posture',
    ],
    [
      "a test's posture attributes",
      { tests: '[{ "src": "ana@example.com", "srcPostureAttrs": {}, "accept": ["tag:server:22"] }]' },
      '"srcPostureAttrs"',
      'device posture',
    ],
    [
      'auto-approved Tailscale Services',
      { autoApprovers: '{ "services": { "svc:web": ["tag:server"] } }' },
      '"services"',
      'Tailscale Services',
    ],
    [
      'every user of a domain',
      { acls: rule('user:*@example.com', 'tag:server:22') },
      '"user:*@example.com"',
      'every user of a domain',
    ],
    ['a Headscale user name', { acls: rule('ana@', 'tag:server:22') }, '"ana@"', 'Headscale user name'],
    ['the owner role', { acls: rule('autogroup:owner', 'tag:server:22') }, '"autogroup:owner"', 'autogroup:admin'],
    [
      'the IT admin role',
      { acls: rule('autogroup:it-admin', 'tag:server:22') },
      '"autogroup:it-admin"',
      'autogroup:admin',
    ],
    ['shared devices', { acls: rule('autogroup:shared', 'tag:server:22') }, '"autogroup:shared"', 'shares no devices'],
    ['every source at all', { acls: rule('autogroup:danger-all', 'tag:server:22') }, '"autogroup:danger-all"', '"*"'],
    [
      'the ssh users autogroup',
      { acls: rule('group:eng', 'autogroup:nonroot:22') },
      '"autogroup:nonroot:22"',
      'ssh rules',
    ],
    [
      'a name with spaces around it',
      { acls: rule(' ana@example.com', 'tag:server:22') },
      '" ana@example.com"',
      'white space',
    ],
  ];

  it.each(cases)('%s', (_name, sections, token, fragment) => {
    const text = base(sections);
    const errors = errorsOf(text);
    // The first occurrence after the section that holds it (a test's "user" is not a group's).
    const from = `"${Object.keys(sections)[0]}"`;
    expectErrorAt(errors, text, token, fragment, 1, from);
    expect(errors).toHaveLength(1);
  });
});

describe('a file with neither acls nor grants', () => {
  // Tailscale lets every device reach every other on every port when a file has neither
  // section (Headscale's recorded captures of ssh-only files show that packet filter).
  const text = '{\n  "tagOwners": { "tag:server": ["autogroup:admin"] },\n}\n';

  const asTailscale = (policyText: string) => validatePolicy(policyText, { asTailscale: true });

  it('read as Tailscale reads it (sent through /api/v2), is refused at the document', () => {
    expect(asTailscale(text).errors).toEqual([
      { line: 1, column: 1, msg: expect.stringContaining('"acls": [] to allow nothing') },
    ]);
    expect(asTailscale('{}').errors).toHaveLength(1);
  });

  it('is accepted with either section, even empty, in any letter case', () => {
    for (const section of ['"acls": []', '"grants": []', '"ACLs": []']) {
      expect(asTailscale(text.replace('{\n', `{\n  ${section},\n`)).errors).toEqual([]);
    }
  });

  it("read as Warren's contract reads it (/v1, and a stored policy), allows nothing", () => {
    expect(validatePolicy(text).errors).toEqual([]);
    expect(compilePolicy(text).rules).toEqual([]);
  });
});

// PUT /v1/acl reads a policy in a worker thread and builds its indexes on the thread that serves
// netmaps from what the worker sent (modules/acl/policy-transfer.ts): the parsed policy cut into
// serialised pieces, put back together and indexed a slice at a time. That must give exactly
// what compiling the text in place gives, for every shape a policy can take, however small the
// pieces and the slices.

import { describe, expect, it } from 'vitest';
import { compileTransferred, preparePolicyTransfer } from '../../src/modules/acl/policy-transfer.js';
import { compilePolicy, DEFAULT_POLICY, validatePolicy } from '../../src/policy/index.js';
import { SHAPES } from './adversarial-shapes.js';

const GRANTS_APPROVERS_AND_SSH = JSON.stringify({
  groups: { 'group:eng': ['alice@example.com', 'bob@example.com'] },
  tagOwners: { 'tag:router': ['group:eng'], 'tag:web': ['alice@example.com'] },
  hosts: { db: '10.1.0.0/16', v6: 'fd00::/64' },
  acls: [
    { action: 'accept', src: ['group:eng', 'db'], dst: ['tag:web:80,443', 'v6:*'] },
    { action: 'accept', src: ['group:eng'], dst: ['autogroup:self:22'] },
    { action: 'accept', proto: 'udp', src: ['autogroup:member'], dst: ['tag:router:53'] },
  ],
  grants: [
    { src: ['alice@example.com'], dst: ['tag:router', 'autogroup:internet'], ip: ['tcp:1-1024', 'icmp:*', '*'] },
    { src: ['group:eng'], dst: ['tag:web'], ip: ['443'], app: { 'example.com/cap/web': [{ role: 'admin' }] } },
    { src: ['bob@example.com'], dst: ['autogroup:self'], app: { 'example.com/cap/self': [{}, { n: 1 }] } },
  ],
  autoApprovers: { routes: { '10.0.0.0/8': ['tag:router'] }, exitNode: ['group:eng'] },
  ssh: [
    { action: 'accept', src: ['autogroup:member'], dst: ['autogroup:self'], users: ['autogroup:nonroot', 'root'] },
    {
      action: 'accept',
      src: ['group:eng', 'carol@example.com'],
      dst: ['tag:web'],
      users: ['deploy'],
      acceptEnv: ['GIT_*'],
    },
  ],
  tests: [{ src: 'bob@example.com', accept: ['tag:web:443'], deny: ['tag:web:8080'] }],
});

const documents: Array<[string, string]> = [
  ['the default policy', DEFAULT_POLICY],
  ['groups, tags, hosts, grants, approvers and ssh rules', GRANTS_APPROVERS_AND_SSH],
  ...SHAPES.map((shape): [string, string] => [`shape: ${shape.name}`, shape.build(40)]),
];

describe('indexing a parsed policy that crossed threads', () => {
  for (const [name, text] of documents) {
    const result = validatePolicy(text);
    it.skipIf(!result.ok)(name, async () => {
      if (!result.ok) return;
      // Three items a piece, so that every list long enough is split across pieces; what crosses
      // threads is a structured clone of the worker's message.
      const prepared = structuredClone(preparePolicyTransfer(text, result.parsed, result.policy, 3));
      const crossed = await compileTransferred(prepared, 0);
      const inPlace = compilePolicy(text);
      expect(crossed).toEqual(inPlace);
      // The identity maps are built on first use: compare them too.
      expect(crossed.userGroups).toEqual(inPlace.userGroups);
      expect(crossed.index.userKeys).toEqual(inPlace.index.userKeys);
      expect(crossed.index.tagKeys).toEqual(inPlace.index.tagKeys);
    });
  }

  it('holds at least the valid shapes (the comparison above is not skipped for all)', () => {
    expect(documents.filter(([, text]) => validatePolicy(text).ok).length).toBeGreaterThan(10);
  });
});

/**
 * POST /v1/acl/validate reports each entry of the policy's `tests` on its own: its line, its
 * src, whether it passed and what failed, beside the unchanged `valid` and `errors`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../devices/helpers.js';
import { startServer, type TestServer } from '../harness.js';
import { policyText, putPolicy, validate } from './helpers.js';

const policy = (tests: string) => `{
  "groups": { "group:eng": ["ana@example.com"] },
  "tagOwners": { "tag:server": ["group:eng"], "tag:db": ["group:eng"] },
  "acls": [
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22,443"] },
    { "action": "accept", "src": ["tag:server"], "dst": ["tag:db:5432"] },
  ],
  "tests": [
${tests}
  ],
}
`;

const PASSING = `    { "src": "ana@example.com", "accept": ["tag:server:22"], "deny": ["tag:db:5432"] },
    { "src": "tag:server", "accept": ["tag:db:5432"] },`;

// Line 9: passes; 10: an accept no rule gives; 11: a deny the rule at line 6 breaks;
// 12: a src that is no selector (never run); 13: passes.
const MIXED = `    { "src": "ana@example.com", "accept": ["tag:server:443"] },
    { "src": "ana@example.com", "accept": ["tag:server:80"] },
    { "src": "tag:server", "deny": ["tag:db:5432"] },
    { "src": "not a selector", "accept": ["tag:server:22"] },
    { "src": "group:eng", "deny": ["tag:db:22"] },`;

describe('POST /v1/acl/validate: the results of the policy tests', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('lists every test as passed when all hold, with its line and src', async () => {
    expect(await validate(server, policy(PASSING))).toEqual({
      valid: true,
      errors: [],
      tests: [
        { line: 9, src: 'ana@example.com', passed: true, failures: [] },
        { line: 10, src: 'tag:server', passed: true, failures: [] },
      ],
    });
  });

  it('says which tests failed, at which line and why, with the same problems errors lists', async () => {
    const result = await validate(server, policy(MIXED));
    expect(result.valid).toBe(false);
    const tests: { line: number; src: string; passed: boolean; failures: any[] }[] = result.tests;
    expect(tests.map((t) => [t.line, t.src, t.passed])).toEqual([
      [9, 'ana@example.com', true],
      [10, 'ana@example.com', false],
      [11, 'tag:server', false],
      [12, 'not a selector', false],
      [13, 'group:eng', true],
    ]);
    expect(tests[1].failures).toEqual([
      {
        line: 10,
        column: 44,
        msg: 'test: ana@example.com -> tag:server:80 expected accept, but no rule accepts it',
      },
    ]);
    expect(tests[2].failures).toEqual([
      {
        line: 11,
        column: 37,
        msg: 'test: tag:server -> tag:db:5432 expected deny, but the rule at line 6 accepts it',
      },
    ]);
    expect(tests[3].failures).toHaveLength(1);
    expect(tests[3].failures[0]).toMatchObject({ line: 12, column: 14 });
    // Every failure is one of the response's errors, and every error inside "tests" is a failure.
    const failures = tests.flatMap((t) => t.failures);
    expect(result.errors).toEqual(expect.arrayContaining(failures));
    expect(result.errors.filter((e: { line: number }) => e.line >= 9 && e.line <= 13)).toEqual(failures);
  });

  it('lists no test for a document that does not parse, and an empty list for a policy without tests', async () => {
    const broken = await validate(server, policy(PASSING).replace('"acls": [', '"acls": [[['));
    expect(broken.valid).toBe(false);
    expect(broken.tests).toEqual([]);
    const none = await validate(server, '{ "acls": [{ "action": "accept", "src": ["group:eng"], "dst": ["*:22"] }] }');
    expect(none.tests).toEqual([]);
  });

  it('leaves PUT as it was: 400 policy_invalid with errors only, and the stored policy unchanged', async () => {
    const before = await policyText(server);
    const body = await expectProblem(await putPolicy(server, policy(MIXED)), 400, 'policy_invalid');
    expect(body.errors).toHaveLength(3);
    expect(body.tests).toBeUndefined();
    expect(await policyText(server)).toEqual(before);
  });
});

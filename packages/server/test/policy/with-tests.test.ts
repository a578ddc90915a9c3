// A stored policy with other tests in place of its own: the tests it runs are the new ones, and
// every other line stays where it was, so a failure names the rule's line in the stored file.

import { describe, expect, it } from 'vitest';
import { hujsonValue, validatePolicy, withTests } from '../../src/policy/index.js';

const RULE = '{ "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] }';
const DENY = [{ src: 'ana@example.com', deny: ['ana@example.com:22'] }];

/** The line of the stored rule that a failing test names. */
const failureLine = (text: string) => {
  const result = validatePolicy(text);
  expect(result.ok).toBe(false);
  return Number(/the rule at line (\d+)/.exec(result.errors.map((e) => e.msg).join('\n'))?.[1]);
};

describe('withTests', () => {
  it('replaces tests that span lines before the rules, keeping the rules on their lines', () => {
    const text = `{
  // Tests first, over several lines.
  "tests": [
    { "src": "ana@example.com", "accept": ["ana@example.com:22"] },
  ],
  "acls": [
    ${RULE},
  ],
}`;
    const replaced = withTests(text, DENY);
    expect(replaced.split('\n').length).toBe(text.split('\n').length);
    expect((hujsonValue(replaced) as { tests: unknown }).tests).toEqual(DENY);
    expect(failureLine(replaced)).toBe(7);
  });

  it('adds tests to a policy without any, after a trailing comma or none', () => {
    for (const text of [`{\n  "acls": [\n    ${RULE},\n  ],\n}`, `{\n  "acls": [\n    ${RULE}\n  ]\n}`]) {
      const added = withTests(text, DENY);
      expect(added.split('\n').length).toBe(text.split('\n').length);
      expect((hujsonValue(added) as { tests: unknown }).tests).toEqual(DENY);
      expect(failureLine(added)).toBe(3);
    }
    expect(hujsonValue(withTests('{}', []))).toEqual({ tests: [] });
  });
});

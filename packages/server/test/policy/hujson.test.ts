import { describe, expect, it } from 'vitest';
import { LineIndex, parseHujson } from '../../src/policy/hujson.js';
import { validatePolicy } from '../../src/policy/index.js';
import { errorsOf, pos } from './helpers.js';

describe('HuJSON parsing', () => {
  it('accepts comments and trailing commas', () => {
    const text = `// a policy
{
  /* block
     comment */
  "groups": { "group:eng": ["ana@example.com",], }, // trailing
  "acls": [
    { "action": "accept", "src": ["group:eng"], "dst": ["ana@example.com:22"], },
  ],
}`;
    const r = validatePolicy(text);
    expect(r.errors).toEqual([]);
    expect(r.ok).toBe(true);
  });

  it('reports a missing comma with its line and column', () => {
    const text = '{\n  "groups": {}\n  "acls": []\n}';
    expect(errorsOf(text)).toEqual([{ line: 3, column: 3, msg: 'expected "," between values' }]);
  });

  it('reports an unterminated string once per line', () => {
    const text = '{\n  "groups": { "group:a": ["ana@example.com] }\n}';
    const errors = errorsOf(text);
    expect(errors[0]).toEqual({ ...pos(text, '"ana@'), msg: 'unterminated string' });
    expect(new Set(errors.map((e) => e.line)).size).toBe(errors.length);
  });

  it('reports an invalid token, an empty document and content after the end', () => {
    expect(errorsOf('{\n  "acls": [tru]\n}')[0]).toEqual({ line: 2, column: 12, msg: 'unexpected character' });
    expect(errorsOf('')).toEqual([{ line: 1, column: 1, msg: 'expected a value' }]);
    expect(errorsOf('   \n  // nothing\n')[0].msg).toBe('expected a value');
    expect(errorsOf('{}\n}')).toEqual([{ line: 2, column: 1, msg: 'unexpected content after the end of the policy' }]);
  });

  it('reports an unclosed object at the end of the text', () => {
    const errors = errorsOf('{\n  "acls": [\n');
    expect(errors.at(-1)?.line).toBe(3);
  });

  it('reports duplicate keys at the repeated key, at any depth', () => {
    const text = '{\n  "groups": { "group:a": [], "group:a": [] },\n  "hosts": {},\n  "hosts": {}\n}';
    const errors = errorsOf(text);
    expect(errors).toEqual([
      { ...pos(text, '"group:a"', 2), msg: 'duplicate key "group:a"' },
      { ...pos(text, '"hosts"', 2), msg: 'duplicate key "hosts"' },
    ]);
  });

  it('reports duplicate keys together with syntax errors', () => {
    const r = parseHujson('{ "a": 1, "a": 2, }}');
    expect(r.duplicateKeys).toHaveLength(1);
    expect(r.syntaxErrors).toHaveLength(1);
  });

  it('ignores a byte order mark without shifting columns', () => {
    expect(validatePolicy('\ufeff{ "hosts": {} }').ok).toBe(true);
    expect(errorsOf('\ufeff{ "bad": {} }')[0]).toMatchObject({ line: 1, column: 4 });
  });

  it('counts CRLF and lone CR as line breaks', () => {
    const lines = new LineIndex('a\r\nb\rc\nd');
    expect(lines.position(3)).toEqual({ line: 2, column: 1 });
    expect(lines.position(5)).toEqual({ line: 3, column: 1 });
    expect(lines.position(7)).toEqual({ line: 4, column: 1 });
    expect(errorsOf('{\r\n  "x": 1\r\n}')[0]).toMatchObject({ line: 2, column: 3 });
  });
});

describe('hostile input', () => {
  it('reports absurd nesting as an error instead of overflowing the stack', () => {
    const text = `{\n  "acls": ${'['.repeat(100_000)}${']'.repeat(100_000)}\n}`;
    const errors = errorsOf(text);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ line: 2, msg: 'nested more than 64 levels deep' });
  });

  it('treats prototype names as plain unknown names', () => {
    const errors = errorsOf(
      '{ "__proto__": {}, "acls": [{ "action": "accept", "src": ["group:constructor"], "dst": ["toString:1"] }] }',
    );
    expect(errors.map((e) => e.msg)).toEqual([
      expect.stringContaining('unknown section "__proto__"'),
      'group "group:constructor" is not defined',
      'host "toString" is not defined',
    ]);
  });
});

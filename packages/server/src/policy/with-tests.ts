/**
 * A stored policy text with its `tests` replaced by others, every other line where it was: what
 * Tailscale's "run ACL tests" call checks (the current policy's rules against tests sent
 * alone). Keeping the lines is what lets a failure still name the rule's line in the file.
 *
 * The tests go in on one line: in place of the old `tests` value (padded with the newlines it
 * spanned), or after the last member when there was none. The text is a stored policy, so it
 * parses; a text whose root is not an object is returned unchanged and validation says so.
 */
import { nameSpelled } from './checker.js';
import { parseHujson, properties } from './hujson.js';

const NEWLINES = /\r\n|\r|\n/g;

export function withTests(text: string, tests: readonly unknown[]): string {
  const { root } = parseHujson(text);
  if (root?.type !== 'object') return text;
  const json = JSON.stringify(tests);
  const current = properties(root).find((p) => nameSpelled(p.key, ['tests']) !== undefined);
  if (current) {
    const { offset, length } = current.value;
    const spanned = text.slice(offset, offset + length).match(NEWLINES)?.length ?? 0;
    return text.slice(0, offset) + json + '\n'.repeat(spanned) + text.slice(offset + length);
  }
  const last = root.children?.at(-1);
  // After the last member itself, so a trailing comma of HuJSON's stays after the new one.
  const at = last ? last.offset + last.length : root.offset + 1;
  return `${text.slice(0, at)}${last ? ', ' : ''}"tests": ${json}${text.slice(at)}`;
}

// HuJSON (JSON with comments and trailing commas) → a parse tree whose nodes carry offsets, so
// that every later error can point at the exact token. jsonc-parser does the parsing; this file
// adds 1-based line/column positions, readable syntax messages and duplicate-key detection
// (which jsonc-parser silently resolves as "last one wins").

import { createScanner, type Node, type ParseError, parse, parseTree } from 'jsonc-parser';
import type { PolicyError } from './types.js';

/** Maps offsets to 1-based line and column (columns count UTF-16 code units; a tab is one). */
export class LineIndex {
  private readonly starts: number[] = [0];

  constructor(text: string) {
    // \n, \r\n and a lone \r each end a line, as jsonc-parser counts them. indexOf is much
    // faster than a character loop, and most documents have no \r at all.
    if (!text.includes('\r')) {
      for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) this.starts.push(i + 1);
      return;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 10 || (c === 13 && text.charCodeAt(i + 1) !== 10)) this.starts.push(i + 1);
    }
  }

  position(offset: number): { line: number; column: number } {
    const s = this.starts;
    let lo = 0;
    let hi = s.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (s[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - s[lo] + 1 };
  }

  error(offset: number, msg: string): PolicyError {
    return { ...this.position(offset), msg };
  }
}

/** Not one of jsonc-parser's codes (which start at 1): a NUL character, wherever it is. */
const NUL_CHARACTER = 0;

// Keyed by jsonc-parser's ParseErrorCode values (a const enum, so not importable at run time
// under isolated modules).
const SYNTAX_MESSAGES: Record<number, string> = {
  [NUL_CHARACTER]: 'a NUL character (U+0000), which a policy may not hold, not even in a comment',
  1: 'unexpected character',
  2: 'invalid number',
  3: 'expected a property name in double quotes',
  4: 'expected a value',
  5: 'expected ":"',
  6: 'expected "," between values',
  7: 'expected "}"',
  8: 'expected "]"',
  9: 'unexpected content after the end of the policy',
  10: 'invalid comment',
  11: 'unterminated /* comment',
  12: 'unterminated string',
  13: 'unterminated number',
  14: 'invalid \\u escape',
  15: 'invalid escape character',
  16: 'invalid character in string (a control character?)',
};

export interface HujsonResult {
  root: Node | undefined;
  /** Syntax errors; when there are any, the tree is only a best-effort recovery. */
  syntaxErrors: PolicyError[];
  /** Duplicate object keys, each at the repeated key. */
  duplicateKeys: PolicyError[];
  lines: LineIndex;
}

export function parseHujson(input: string): HujsonResult {
  // A byte order mark is blanked rather than removed so that offsets stay those of the input.
  const text = input.charCodeAt(0) === 0xfeff ? ` ${input.slice(1)}` : input;
  const lines = new LineIndex(text);
  const raw: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, raw, { allowTrailingComma: true, disallowComments: false });
  } catch (e) {
    // jsonc-parser recurses per nesting level; absurd nesting overflows the stack.
    if (!(e instanceof RangeError)) throw e;
    return { root: undefined, syntaxErrors: [tooDeep(text, lines)], duplicateKeys: [], lines };
  }
  // After the first error jsonc-parser often reports a cascade on the same line (an unterminated
  // string breaks the rest of the line); the first error of each line is the useful one.
  const syntaxErrors: PolicyError[] = [];
  let lastLine = 0;
  for (const e of mergeByOffset(raw, nulCharacters(text))) {
    const err = lines.error(e.offset, SYNTAX_MESSAGES[e.error] ?? 'syntax error');
    if (err.line === lastLine) continue;
    lastLine = err.line;
    syntaxErrors.push(err);
  }
  const duplicateKeys: PolicyError[] = [];
  if (root) findDuplicateKeys(root, lines, duplicateKeys);
  return { root, syntaxErrors, duplicateKeys, lines };
}

/** A syntax error as found: a code of SYNTAX_MESSAGES at an offset of the text. */
interface FoundError {
  error: number;
  offset: number;
}

/**
 * The NUL characters of the text. jsonc-parser takes one inside a comment, but the policy is
 * stored verbatim and PostgreSQL cannot store text that holds one (the PUT was a 500 there):
 * refused by validation, so PUT and validate agree on every backend.
 */
function nulCharacters(text: string): FoundError[] {
  const found: FoundError[] = [];
  for (let i = text.indexOf('\0'); i >= 0; i = text.indexOf('\0', i + 1))
    found.push({ error: NUL_CHARACTER, offset: i });
  return found;
}

/** Two lists of errors, each in offset order, as one in offset order (the parser's first at a tie). */
function mergeByOffset(a: readonly FoundError[], b: readonly FoundError[]): readonly FoundError[] {
  if (b.length === 0) return a;
  return [...a, ...b].sort((x, y) => x.offset - y.offset);
}

const MAX_DEPTH = 64;

/** Points at the bracket that goes past MAX_DEPTH (only run after the parser gave up). */
function tooDeep(text: string, lines: LineIndex): PolicyError {
  const scanner = createScanner(text, true);
  let depth = 0;
  // Token kinds from jsonc-parser's SyntaxKind: 1 `{`, 2 `}`, 3 `[`, 4 `]`, 17 end of file.
  for (let t = scanner.scan(); t !== 17; t = scanner.scan()) {
    if (t === 1 || t === 3) {
      if (++depth > MAX_DEPTH)
        return lines.error(scanner.getTokenOffset(), `nested more than ${MAX_DEPTH} levels deep`);
    } else if (t === 2 || t === 4) depth--;
  }
  return lines.error(0, `nested more than ${MAX_DEPTH} levels deep`);
}

function findDuplicateKeys(root: Node, lines: LineIndex, out: PolicyError[]): void {
  const stack: Node[] = [root];
  while (stack.length > 0) {
    const node = stack.pop() as Node;
    if (!node.children) continue;
    if (node.type === 'object') {
      const props = node.children;
      // Most objects (rules, tests) have a handful of keys: comparing pairs beats building a Set.
      const seen = props.length > 8 ? new Set<string>() : null;
      for (let i = 0; i < props.length; i++) {
        const key = props[i].children?.[0]?.value;
        if (typeof key !== 'string') continue;
        let dup = false;
        if (seen) {
          dup = seen.has(key);
          seen.add(key);
        } else {
          for (let j = 0; j < i && !dup; j++) dup = props[j].children?.[0]?.value === key;
        }
        if (dup) out.push(lines.error(props[i].children?.[0]?.offset ?? props[i].offset, `duplicate key "${key}"`));
      }
    }
    for (const child of node.children) stack.push(child);
  }
}

/** The property nodes of an object node as [key, value] pairs (skipping broken ones). */
export function properties(node: Node): Array<{ key: string; keyNode: Node; value: Node }> {
  const out: Array<{ key: string; keyNode: Node; value: Node }> = [];
  for (const prop of node.children ?? []) {
    const keyNode = prop.children?.[0];
    const value = prop.children?.[1];
    if (keyNode && value && typeof keyNode.value === 'string') out.push({ key: keyNode.value, keyNode, value });
  }
  return out;
}

/** Already validated HuJSON text → its plain JSON value (comments and trailing commas dropped). */
export function hujsonValue(text: string): unknown {
  return parse(text, [], { allowTrailingComma: true, disallowComments: false });
}

/**
 * Which files write which tables, read from the server's sources: Kysely's `insertInto`,
 * `updateTable`, `deleteFrom`, `replaceInto` and `mergeInto` with a table named in the call,
 * `insertRows(db, 'table', …)` (storage/bulk-insert.ts), and raw SQL in string and template
 * literals (`insert into t`, `update t set`, `delete from t`); comments are left out. A write
 * whose table is not written out in the call (a variable, `${table}`) is reported without a
 * table, so a reader can never miss one silently: the test names the tables such files write.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { ROOT, sourceFiles } from './import-graph.js';

export interface TableWrite {
  /** Path from the repository root. */
  file: string;
  /** The table, or undefined when the call does not name it. */
  table: string | undefined;
  line: number;
}

const KYSELY = /\.(?:insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(\s*(?:(['"])(\w+)\1|(?=[^'"\s]))/g;
const BULK = /\binsertRows\(\s*\w+\s*,\s*(?:(['"])(\w+)\1|(?=[^'"\s]))/g;
const LITERAL = /`(?:[^`\\]|\\.)*`|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g;
const COMMENT = /\/\*[\s\S]*?\*\/|^\s*\/\/.*$/gm;
const RAW = /\b(?:insert\s+(?:or\s+\w+\s+)?into|delete\s+from|update)\s+(?:"?(\w+)"?|(\$\{))(?=[\s\S])/gi;

function lineOf(text: string, index: number): number {
  return text.slice(0, index).split('\n').length;
}

/** Every write found in the source files under `dirs` (relative to the repository root). */
export function tableWrites(dirs: readonly string[]): TableWrite[] {
  const writes: TableWrite[] = [];
  for (const path of dirs.flatMap((dir) => sourceFiles(`${ROOT}/${dir}`))) {
    const file = relative(ROOT, path);
    // Comments blanked, their line breaks kept, so lines still count right.
    const text = readFileSync(path, 'utf8').replace(COMMENT, (comment) => comment.replace(/[^\n]/g, ' '));
    for (const pattern of [KYSELY, BULK]) {
      for (const match of text.matchAll(pattern))
        writes.push({ file, table: match[2], line: lineOf(text, match.index) });
    }
    for (const literal of text.matchAll(LITERAL)) {
      for (const match of literal[0].matchAll(RAW)) {
        const rest = literal[0].slice(match.index + match[0].length);
        // `update t` is a write only when `set` follows; prose such as "update the …" is not.
        if (/^update/i.test(match[0]) && match[1] && !/^\s+set\b/i.test(rest)) continue;
        writes.push({ file, table: match[1], line: lineOf(text, literal.index + match.index) });
      }
    }
  }
  return writes;
}

// Reads V8's code traces of a benchmark's servers, marked by bench/compile-probe.mjs, as what
// the optimising compiler did in each policy change's window:
//
//   npx tsx bench/compile-summary.ts /tmp/traces [--top 25]
//
// (the directory the benchmark ran in, holding `code-<pid>-<isolate>.asm`: one server a pid).
// A change's window runs from its PUT /v1/acl (one after the fleet's first map builds: the PUT
// that sets the policy before the fleet enrolls is not a change) to the probe's mark that the
// streams have built nothing for 500 ms or the next request, whichever comes first, and holds what V8's main thread traced in it, and what
// the worker threads traced from the first message they received after that PUT (the policy
// worker validating the change's document) to their next. For each window: the optimisations
// completed (OSR apart) with the compile time V8 reports for each (preparing on the main
// thread, compiling on the compiler's thread, finalising on the main thread, summed), the
// deoptimisations by function and reason, and, for each function compiled, whether it is
// compiled for the first time in its isolate's life, again after a deoptimisation, or again
// with no deoptimisation in between (its optimised code dropped, or another closure).
// Functions are named with their file; `[worker]` marks a worker thread's.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '25' } },
});
const dir = positionals[0];
if (!dir) throw new Error('usage: compile-summary.ts DIRECTORY [--top N]');
const TOP = Number(flags.top);

/** `name (file)` from V8's `<JSFunction name <file> (sfi = …)>`; the file from the repository's root. */
function functionOf(line: string): string {
  const match = /<JSFunction ?([^<(]*?)\s*(?:<([^>]*)>)?\s*\(sfi = /.exec(line);
  if (!match) return '?';
  const name = match[1] || '(anonymous)';
  const where = (match[2] ?? '')
    .replace(/^file:\/\//, '')
    .replace(/^.*\/packages\//, '')
    .replace(/^.*\/node_modules\//, '');
  return where ? `${name} (${where})` : name;
}

const sourceMaps = new Map<string, SourceMap | undefined>();
/** A position in a built file as `source:line`, through the file's source map where it has one. */
function original([, url, line, column]: RegExpMatchArray): string {
  const path = url.replace(/^file:\/\//, '');
  if (!sourceMaps.has(path))
    sourceMaps.set(
      path,
      existsSync(`${path}.map`) ? new SourceMap(JSON.parse(readFileSync(`${path}.map`, 'utf8'))) : undefined,
    );
  const entry = sourceMaps.get(path)?.findEntry(Number(line) - 1, Number(column) - 1);
  if (entry && 'originalSource' in entry)
    return `${entry.originalSource.replace(/^.*\/packages\//, '')}:${entry.originalLine + 1}`;
  return `${path.replace(/^.*\/(packages|node_modules)\//, '')}:${line}`;
}

type Why = 'first' | 'after a deopt' | 'invalidated' | 'again';
interface Compile {
  fn: string;
  ms: number;
  osr: boolean;
  why: Why;
}
interface Deopt {
  fn: string;
  reason: string;
  kind: string;
  /** Where, with `--trace-deopt-verbose`: the source position, innermost inlined function first. */
  at?: string;
}
interface Window {
  compiles: Compile[];
  deopts: Deopt[];
  marked: Map<string, number>;
  /** Functions whose optimised code was thrown away as a map it relied on changed, by name. */
  invalidations: Map<string, number>;
  builds: number;
}

const COMPLETED = /^\[completed compiling .*?\(target TURBOFAN\)( OSR)? - took ([\d.]+), ([\d.]+), ([\d.]+) ms\]/;
const DEPENDENT = /^\[marking dependent code 0x[0-9a-f]+ <Code TURBOFAN> \(0x[0-9a-f]+ <SharedFunctionInfo ([^>]*)>/;
const BAILOUT = /^\[bailout \(kind: ([^,]*), reason: ([^)]*)\)/;

/**
 * One isolate's trace, cut where `opens` says a window opens (its index, or undefined for a
 * line that closes the open window, or null for a mark that changes nothing).
 */
function read(path: string, opens: (mark: string[]) => number | undefined | null, worker: boolean) {
  const windows = new Map<number, Window>();
  let window: Window | undefined;
  const optimised = new Set<string>();
  const deoptimised = new Set<string>();
  /** Names (V8 gives no file there) of functions whose optimised code a map's change invalidated. */
  const invalidated = new Set<string>();
  // V8 ends some traces (a dependency's invalidation) without a newline: split before each trace.
  for (const line of readFileSync(path, 'utf8').split(/\n|(?=\[(?:marking|bailout|compiling|completed) |MARK )/)) {
    if (line.startsWith('MARK ')) {
      const mark = line.split(' ').slice(1);
      const index = opens(mark);
      if (index === null) continue;
      if (mark[0] === 'builds' && window) window.builds += Number(mark[1]);
      window = undefined;
      if (index !== undefined) {
        window = { compiles: [], deopts: [], marked: new Map(), invalidations: new Map(), builds: 0 };
        windows.set(index, window);
      }
      continue;
    }
    const fn = worker ? `[worker] ${functionOf(line)}` : functionOf(line);
    const completed = COMPLETED.exec(line);
    const bailout = BAILOUT.exec(line);
    const dependent = DEPENDENT.exec(line);
    if (fn.includes('compile-probe.mjs')) continue;
    if (dependent) {
      invalidated.add(dependent[1]);
      if (window) window.invalidations.set(dependent[1], (window.invalidations.get(dependent[1]) ?? 0) + 1);
    } else if (line.startsWith('[marking 0x')) {
      const reason = /reason: ([^\]]*)\]/.exec(line)?.[1] ?? '?';
      window?.marked.set(reason, (window.marked.get(reason) ?? 0) + 1);
    } else if (completed) {
      const ms = Number(completed[2]) + Number(completed[3]) + Number(completed[4]);
      const name = fn.replace(/^\[worker\] /, '').replace(/ \(.*$/, '');
      const why: Why = !optimised.has(fn)
        ? 'first'
        : deoptimised.has(fn)
          ? 'after a deopt'
          : invalidated.has(name)
            ? 'invalidated'
            : 'again';
      invalidated.delete(name);
      window?.compiles.push({ fn, ms, osr: completed[1] !== undefined, why });
      optimised.add(fn);
      deoptimised.delete(fn);
    } else if (bailout) {
      window?.deopts.push({ fn, kind: bailout[1], reason: bailout[2] });
      deoptimised.add(fn);
    } else if (line.trimStart().startsWith(';;; deoptimize at ')) {
      const last = window?.deopts.at(-1);
      if (last) last.at = [...line.matchAll(/<([^>]*):(\d+):(\d+)>/g)].map(original).join(' in ');
    }
  }
  return windows;
}

const files = readdirSync(dir).filter((name) => /^code-\d+-\d+\.asm$/.test(name));
const pids = [...new Set(files.map((name) => name.split('-')[1]))];
const servers: Array<{ pid: string; windows: Window[] }> = [];
for (const pid of pids) {
  // The main thread: a change opens at a PUT /v1/acl once the streams have built, closes when they idle.
  const puts: number[] = [];
  let built = false;
  const main = read(
    join(dir, `code-${pid}-0.asm`),
    (mark) => {
      if (mark[0] === 'builds') {
        built = true;
        return undefined;
      }
      if (mark[0] === 'request' && mark[1] === 'PUT' && mark[2].startsWith('/v1/acl') && built) {
        puts.push(Number(mark[3]));
        return puts.length - 1;
      }
      // Any other request (the benchmark's next call) closes a window too: a stream or two
      // building now and then (presence) can hold the idle mark off past it.
      return mark[0] === 'request' ? undefined : null;
    },
    false,
  );
  const windows = [...main.values()];
  // Each worker's message after a change's PUT (and before the next) belongs to that change.
  for (const name of files.filter((f) => f.startsWith(`code-${pid}-`) && !f.endsWith('-0.asm'))) {
    const worker = read(
      join(dir, name),
      (mark) => {
        const at = Number(mark[1]);
        const change = puts.findLastIndex((put) => put <= at);
        return change < 0 ? undefined : change;
      },
      true,
    );
    for (const [change, w] of worker) {
      windows[change].compiles.push(...w.compiles);
      windows[change].deopts.push(...w.deopts);
      for (const [name, n] of w.invalidations) windows[change].invalidations.set(`[worker] ${name}`, n);
    }
  }
  servers.push({ pid, windows });
}

const ms = (n: number) => n.toFixed(1).padStart(7);
function grouped<T>(items: T[], key: (item: T) => string): Array<[string, T[]]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return [...groups];
}

function report(pid: string, w: Window, change: number) {
  const regular = w.compiles.filter((c) => !c.osr);
  const osr = w.compiles.filter((c) => c.osr);
  const total = (cs: Compile[]) => cs.reduce((sum, c) => sum + c.ms, 0);
  const out = (text: string) => process.stdout.write(`${text}\n`);
  out(
    `\n== server ${pid}, policy change ${change + 1} (${w.builds > 0 ? `${w.builds} builds` : `closed by a request`})`,
  );
  out(
    `optimisations ${regular.length} (${ms(total(regular)).trim()} ms), OSR ${osr.length} (${ms(total(osr)).trim()} ms), deoptimisations ${w.deopts.length}, code invalidated ${[...w.invalidations.values()].reduce((a, b) => a + b, 0)}`,
  );
  for (const why of ['first', 'after a deopt', 'invalidated', 'again'] as const) {
    const these = w.compiles.filter((c) => c.why === why);
    out(`  compiled ${why.padEnd(13)} ${String(these.length).padStart(4)} ${ms(total(these))} ms`);
  }
  out(`  marked for: ${[...w.marked].map(([reason, n]) => `${reason} ${n}`).join(', ')}`);
  out('top compile time (count, ms, why):');
  const byFn = grouped(w.compiles, (c) => c.fn).sort((a, b) => total(b[1]) - total(a[1]));
  for (const [fn, cs] of byFn.slice(0, TOP)) {
    const whys = grouped(cs, (c) => c.why + (c.osr ? ' OSR' : '')).map(([why, list]) => `${why} ${list.length}`);
    out(`  ${String(cs.length).padStart(2)} ${ms(total(cs))}  ${fn}  [${whys.join(', ')}]`);
  }
  const twice = byFn.filter(([, cs]) => cs.length > 1);
  out(`compiled more than once in the window: ${twice.length}`);
  for (const [fn, cs] of twice) out(`  ${cs.length}x ${fn}`);
  out('deoptimisations:');
  const deopts = grouped(w.deopts, (d) => `${d.fn} — ${d.kind}, ${d.reason}${d.at ? ` at ${d.at}` : ''}`);
  for (const [key, ds] of deopts.sort((a, b) => b[1].length - a[1].length))
    out(`  ${String(ds.length).padStart(2)} ${key}`);
}

for (const { pid, windows } of servers) for (const [change, w] of windows.entries()) report(pid, w, change);

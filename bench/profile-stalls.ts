// Reads a CPU profile of `warren serve` (the reads benchmark's `--profile DIR`) for what held
// the event loop at once, rather than where time went on average (profile-summary.ts):
//
//   npx tsx bench/profile-stalls.ts DIR/<call>.cpuprofile [--over 1] [--top 15]
//
// Gaps: the profiler samples every 200 µs from a thread of its own; an interval between two
// samples far longer than that is time the process was not running at all (the machine ran
// something else). Runs: consecutive samples in the garbage collector, or inside one timer or
// setImmediate callback (an audit batch, a detector unit), over --over ms each, with the
// Warren functions they were in. Request handling is not reported as runs: one request is tens of
// µs, and the samples of consecutive requests cannot be told apart.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { over: { type: 'string', default: '1' }, top: { type: 'string', default: '15' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: profile-stalls.ts FILE.cpuprofile [--over MS] [--top N]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[] };
const overUs = Number(flags.over) * 1000;

const parent = new Map<number, number>();
const byId = new Map<number, Node>();
for (const node of profile.nodes) {
  byId.set(node.id, node);
  for (const child of node.children ?? []) parent.set(child, node.id);
}
function stack(id: number): Node[] {
  const frames: Node[] = [];
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(byId.get(at)!);
  return frames;
}
const CALLBACKS = ['listOnTimeout', 'processImmediate'];
function kindOf(id: number): string {
  const names = stack(id).map((n) => n.callFrame.functionName);
  if (names[0] === '(garbage collector)') return 'garbage collector';
  if (names[0] === '(idle)' || names[0] === '(program)') return '';
  return CALLBACKS.find((name) => names.includes(name)) ?? '';
}

const gaps: number[] = [];
const runs: { kind: string; us: number; atMs: number; frames: Map<string, number> }[] = [];
let current: (typeof runs)[number] | undefined;
let t = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const delta = profile.timeDeltas[i] ?? 0;
  t += delta;
  if (delta > 2000 && i > 0) gaps.push(delta);
  const kind = kindOf(profile.samples[i]!);
  if (current && current.kind !== kind) {
    if (current.us >= overUs) runs.push(current);
    current = undefined;
  }
  if (!kind) continue;
  current ??= { kind, us: 0, atMs: t / 1000, frames: new Map() };
  current.us += profile.timeDeltas[i + 1] ?? 0;
  const own = stack(profile.samples[i]!).find((n) => /packages\/(server|cli)\//.test(n.callFrame.url));
  const name = own ? `${own.callFrame.functionName || '(anonymous)'}:${own.callFrame.lineNumber}` : kind;
  current.frames.set(name, (current.frames.get(name) ?? 0) + 1);
}
if (current && current.us >= overUs) runs.push(current);

const total = (list: number[]) => list.reduce((sum, n) => sum + n, 0) / 1000;
console.log(`${file}: ${(t / 1000).toFixed(0)} ms sampled`);
gaps.sort((a, b) => b - a);
console.log(
  `not running (intervals over 2 ms between samples): ${gaps.length}, ${total(gaps).toFixed(1)} ms in all; longest ${gaps
    .slice(0, 8)
    .map((g) => (g / 1000).toFixed(1))
    .join(', ')} ms`,
);
for (const kind of ['garbage collector', ...CALLBACKS]) {
  const of = runs.filter((run) => run.kind === kind).map((run) => run.us);
  if (of.length) {
    console.log(
      `${kind}: ${of.length} runs over ${flags.over} ms, ${total(of).toFixed(1)} ms in all, longest ${(Math.max(...of) / 1000).toFixed(1)} ms`,
    );
  }
}
for (const run of runs.sort((a, b) => b.us - a.us).slice(0, Number(flags.top))) {
  const frames = [...run.frames].sort((a, b) => b[1] - a[1]).slice(0, 4);
  console.log(
    `${(run.us / 1000).toFixed(1).padStart(6)} ms at ${run.atMs.toFixed(0).padStart(5)} ms  ${run.kind}  ${frames.map(([f, n]) => `${f} ×${n}`).join(', ')}`,
  );
}

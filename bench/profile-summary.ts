// Reads a CPU profile of `warren serve` (the reads benchmark's `--profile DIR`, or node's
// `--cpu-prof`) as where each request's time goes:
//
//   npx tsx bench/profile-summary.ts DIR/v1_network.cpuprofile [--requests N] [--top 30] [--stage NAME]
//
// By stage: each sample is charged to the innermost frame of its stack that names a stage of
// the request path (the key check, the limiter, the audit queue and its batched write, the
// request log, serialisation, the socket write, SQLite's statements…), so a stage's figure
// holds what it calls that no inner stage claims. By function: self time. With --requests (the
// reads benchmark writes it beside each profile, `<call>.cpu.json`), figures are µs per request
// as well as shares. --stage lists the functions a stage's time was spent in (self time).
//
// The profiler samples wall time on the main thread: a sample taken while the thread waits in a
// system call (a socket write that wakes the client on the same cores) counts for that call.
// The CPU time per request the benchmark prints is the figure to compare between builds; the
// stages say where it goes.
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface Profile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: { requests: { type: 'string' }, top: { type: 'string', default: '30' }, stage: { type: 'string' } },
});
const file = positionals[0];
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [--requests N] [--top N]');
const sidecar = file.replace(/\.cpuprofile$/, '.cpu.json');
const requests = Number(
  flags.requests ?? (existsSync(sidecar) ? (JSON.parse(readFileSync(sidecar, 'utf8')).requests ?? 0) : 0),
);

const fn = (name: string) => (f: CallFrame) => f.functionName === name;
const any =
  (...names: string[]) =>
  (f: CallFrame) =>
    names.includes(f.functionName);
const inModule = (pattern: RegExp) => (f: CallFrame) => pattern.test(f.url);
const warren = inModule(/packages\/(server|cli)\/(dist|src)\//);

/** Stages, innermost first: the first frame (from the leaf up) that one of these claims decides. */
const STAGES: [string, (f: CallFrame) => boolean][] = [
  ['(garbage collector)', fn('(garbage collector)')],
  ['(idle)', fn('(idle)')],
  ['(program)', fn('(program)')],
  ['socket write', any('writev', 'writeUtf8String', 'writeBuffer', 'writeLatin1String')],
  [
    'key: format and hash',
    (f) => warren(f) && /^(hashSecret|isWellFormedSecret|sameHash|toBase62)$/.test(f.functionName),
  ],
  ['SQLite commit counter', (f) => warren(f) && f.functionName === 'committedVersion'],
  ['audit: batched write', (f) => warren(f) && /^(insertAuditEntries|writeKeyUses|addKeyUses)$/.test(f.functionName)],
  ['SQLite statement (compiled query)', (f) => warren(f) && /^(runCommitted|runPrepared)$/.test(f.functionName)],
  ['Kysely', inModule(/node_modules\/kysely\//)],
  ['database driver', inModule(/node_modules\/(better-sqlite3|pg|pg-protocol|pg-pool)\//)],
  ['key: lookup', (f) => warren(f) && /^(authenticateApiKey|authenticateAccessToken|loadKey)$/.test(f.functionName)],
  ['rate limiter', (f) => warren(f) && /^(hit|setRateLimitHeaders|decide|expire)$/.test(f.functionName)],
  ['audit: entry', (f) => warren(f) && /^(auditRow|enqueue|noteKeyUse|callPath|auditCall)$/.test(f.functionName)],
  ['request log', inModule(/node_modules\/(pino|sonic-boom|quick-format-unescaped|fast-redact)\//)],
  ['request id', (f) => warren(f) && /^(requestIdFrom|newRequestId)$/.test(f.functionName)],
  ['Host and codings checks', (f) => warren(f) && /^(checkHostHeader|checkCodings)$/.test(f.functionName)],
  ['serialisation', (f) => inModule(/fast-json-stringify/)(f) || /^anonymous\d*$/.test(f.functionName)],
  [
    'pipeline (authentication, scope)',
    (f) => warren(f) && /^(authenticateCall|requireScope|hasScope)$/.test(f.functionName),
  ],
  ['routing', inModule(/node_modules\/find-my-way\//)],
  ['Fastify', inModule(/node_modules\/(fastify|avvio|light-my-request)\//)],
  ['node:http and streams', inModule(/^node:(_http|net|internal\/streams|internal\/stream_base)/)],
  ['Warren, other', warren],
  [
    'promises and ticks',
    (f) => f.functionName === 'runMicrotasks' || /^node:internal\/process\/task_queues/.test(f.url),
  ],
  ['node, other', inModule(/^node:/)],
];

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);

/** The probe's own frames (stopping the profiler is sampled too) are not the server's time. */
const PROBE = 'probe';
const stageOf = new Map<number, string>();
function stage(id: number): string {
  const known = stageOf.get(id);
  if (known) return known;
  const frame = byId.get(id)!.callFrame;
  if (frame.url.endsWith('/profile-probe.mjs')) return PROBE;
  const own = STAGES.find(([, test]) => test(frame))?.[0];
  const parent = parentOf.get(id);
  // A frame under the probe belongs to it whatever it is.
  const above = parent === undefined ? 'other' : stage(parent);
  const found = above === PROBE ? PROBE : (own ?? above);
  stageOf.set(id, found);
  return found;
}

const stages = new Map<string, number>();
const self = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  const s = stage(id);
  if (s === PROBE || (flags.stage !== undefined && s !== flags.stage)) return;
  total += us;
  stages.set(s, (stages.get(s) ?? 0) + us);
  const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
  const where = url ? ` ${url.replace(/^.*\/(node_modules|packages)\//, '')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'}${where}`;
  self.set(key, (self.get(key) ?? 0) + us);
});

const line = (us: number, label: string) =>
  `${((100 * us) / total).toFixed(1).padStart(5)}%${requests ? `${(us / requests).toFixed(1).padStart(8)} µs` : ''}  ${label}`;
console.log(
  `${file}: ${(total / 1000).toFixed(0)} ms sampled${requests ? `, ${requests} requests, ${(total / requests).toFixed(1)} µs each` : ''}`,
);
if (flags.stage === undefined) {
  console.log('\nby stage');
  for (const [label, us] of [...stages].sort((a, b) => b[1] - a[1])) console.log(line(us, label));
}
console.log(
  `\nby function (self)${flags.stage === undefined ? '' : `, in stage "${flags.stage}"; shares of the stage`}`,
);
for (const [label, us] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(flags.top)))
  console.log(line(us, label));

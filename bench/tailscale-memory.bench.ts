// What a connected Tailscale-protocol device costs the server: `npm run bench -- tailscale-memory
// [--count 1000] [--steps 2] [--group 5] [--snapshots DIR]`.
//
// One `warren serve` on a SQLite file, preloaded with soak-probe.mjs, which on a signal collects
// the whole heap and reports the process's memory (and, with --snapshots, writes a heap snapshot
// into DIR). It is sampled before any device connects, then after each of --steps equal parts
// of --count simulated devices (`warren node simulate --protocol tailscale`, groups of --group
// tagged devices as in the tailscale benchmark) connected and got their maps. Per connected
// device, from the sample before: resident memory (the goal is < 20 kB at 10,000), the V8 heap
// in use and the Buffers' backing stores. All after a full collection, so garbage is not
// counted (the tailscale benchmark prints its figure both with and without one).
//
// Beside them, the V8 heap it keeps (its pages, used or not), what V8 is told of outside it
// (`external`: Buffers, not nghttp2's memory), the rest of the resident growth (nghttp2's
// sessions, the C allocator's slack, native objects), the anonymous resident pages, and the V8
// heap after a collection that compacts every page (what of the heap kept is only pages with
// few live objects on them, left by the enrollment's garbage); then the heap's growth by space.
//
// Two snapshots say what a device holds: compare them by node type (DevTools' Comparison view,
// or a script over the JSON); `Node / nghttp2_memory` is each HTTP/2 session's nghttp2 memory.
// docs/decisions/performance.md (memory per connected device) has the breakdown this gave.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { simulateTailscale, type TailscaleSimulation } from '../packages/cli/src/node/tailscale-simulator.js';
import { serveProbed } from './probed-server.js';
import { initWarren } from './warren-process.js';

const { values: flags } = parseArgs({
  options: {
    count: { type: 'string', default: '1000' },
    steps: { type: 'string', default: '2' },
    group: { type: 'string', default: '5' },
    snapshots: { type: 'string' },
  },
});
const COUNT = Number(flags.count);
const STEPS = Number(flags.steps);
const GROUP = Number(flags.group);

const dir = mkdtempSync(join(tmpdir(), 'warren-bench-ts-memory-'));
const db = `sqlite:${join(dir, 'warren.db')}`;
const probe = join(dir, 'probe.jsonl');
const apiKey = initWarren(db);
const server = await serveProbed(db, probe, {
  env: { WARREN_SOAK_COMPACT: '1', ...(flags.snapshots ? { WARREN_SOAK_SNAPSHOTS: flags.snapshots } : {}) },
});
const sims: TailscaleSimulation[] = [];

async function call(method: string, path: string, body: string, type = 'application/json') {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': type },
    body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return JSON.parse(text || '{}');
}

const collected = server.collected;

try {
  const groups = Math.ceil(COUNT / GROUP);
  const owners = Array.from({ length: groups }, (_, g) => `"tag:g${g}": ["autogroup:admin"]`);
  const rules = Array.from(
    { length: groups },
    (_, g) => `{ "action": "accept", "src": ["tag:g${g}"], "dst": ["tag:g${g}:*"] }`,
  );
  await call(
    'PUT',
    '/v1/acl',
    `{ "tagOwners": { ${owners.join(', ')} }, "acls": [${rules.join(', ')}] }`,
    'application/hujson',
  );
  const { key } = await call('POST', '/v1/keys', JSON.stringify({ type: 'auth', reusable: true }));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const before = await collected();
  const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`.padStart(10);
  process.stdout.write(`Tailscale-protocol devices on one instance (SQLite), memory after a full collection\n`);
  process.stdout.write(
    `  ${'devices'.padStart(8)} ${'RSS/dev'.padStart(10)} ${'heap/dev'.padStart(10)} ${'buffers/dev'.padStart(11)}` +
      ` ${'V8 heap/dev'.padStart(11)} ${'native/dev'.padStart(10)} ${'other/dev'.padStart(10)} ${'anon/dev'.padStart(10)}` +
      ` ${'compacted V8 heap/dev'.padStart(21)}\n`,
  );
  let connected = 0;
  let last = before;
  for (let step = 1; step <= STEPS; step++) {
    const offset = connected;
    const sim = await simulateTailscale({
      server: server.url,
      authKey: key,
      count: Math.round((COUNT * step) / STEPS) - offset,
      concurrency: 32,
      hostnamePrefix: `ts${step}`,
      tags: (index) => [`tag:g${Math.floor((offset + index) / GROUP)}`],
    });
    sims.push(sim);
    if (sim.failed > 0) process.stderr.write(`  ${sim.failed} devices failed: ${JSON.stringify(sim.reasons)}\n`);
    connected += sim.devices.length;
    // The peers' own arrival (deltas to earlier devices) and presence settle first.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const now = await collected();
    type Figure = 'rss' | 'heapUsed' | 'heapTotal' | 'external' | 'arrayBuffers' | 'rssAnon';
    const grown = (k: Figure) => ((now[k] ?? 0) - (before[k] ?? 0)) / connected;
    const per = (k: Figure) => kB(grown(k));
    // The heap V8 holds after compacting every page, from the compacted sample before the
    // fleet: against 'V8 heap/dev', what the old space held only in pages with few live objects.
    // (The resident size right after compacting says nothing: freed pages are released later.)
    const compactedGrowth = (k: 'heapTotal') =>
      ((now.afterCompaction?.[k] ?? 0) - (before.afterCompaction?.[k] ?? 0)) / connected;
    // What V8 knows of (its heap's pages, the native memory reported to it) and the rest of
    // the resident growth: nghttp2's sessions, the C allocator's slack, native objects.
    const other = grown('rss') - grown('heapTotal') - grown('external');
    process.stdout.write(
      `  ${String(connected).padStart(8)} ${per('rss')} ${per('heapUsed')} ${per('arrayBuffers').padStart(11)}` +
        ` ${per('heapTotal').padStart(11)} ${per('external')} ${kB(other)} ${per('rssAnon')}` +
        ` ${kB(compactedGrowth('heapTotal')).padStart(21)}\n`,
    );
    last = now;
  }
  // The V8 heap's growth per device by space: what it holds (size) and what is live in it (used).
  const spaces = Object.entries(last.spaces ?? {})
    .map(([name, { size, used }]) => {
      const was = before.spaces?.[name] ?? { size: 0, used: 0 };
      return { name, size: (size - was.size) / connected, used: (used - was.used) / connected };
    })
    .filter((s) => Math.abs(s.size) >= 100 || Math.abs(s.used) >= 100);
  process.stdout.write(`  V8 spaces at ${connected} devices, per device (held / in use):\n`);
  for (const s of spaces) {
    process.stdout.write(`    ${s.name.padEnd(24)} ${kB(s.size)} ${kB(s.used)}\n`);
  }
} finally {
  for (const sim of sims) sim.stop();
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('exit', resolve));
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);

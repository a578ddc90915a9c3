// Soak benchmark: `npm run bench -- soak [--seconds 60] [--devices 10000] [--group 100]
// [--db postgres://…] [--instances 2] [--warmup 60] [--max-warmup 300]`.
//
// `warren serve` runs in --instances child processes on one database (a temporary SQLite file
// by default, or the PostgreSQL URL in --db; several instances need PostgreSQL). A fleet of
// --devices simulated agents (simulate() of the node agent, spread over the instances)
// heartbeats, follows its netmap (as deltas) and reports connections, while API clients in
// closed loops (no think time: saturation) list devices, push the policy and create keys,
// spread over the instances too. The policy makes groups of --group devices that reach each
// other, so netmaps hold --group - 1 peers.
//
// Printed: every 5 s, per instance, RSS and heap (read in the server by bench/soak-probe.mjs)
// and the calls of the last 5 s; at the end, per call, throughput, p50/p99 and errors (must be
// 0), and the growth of RSS and of the live heap from the end of the warm-up (at least --warmup
// seconds after the fleet is enrolled, and until 95% of the devices hold their first netmap, at
// most --max-warmup seconds) to the end (target < 10%). The baseline of the growth ratio is
// taken at the end of the warm-up, in the same run. Both ends are read right after a full
// collection that the benchmark asks each server for (bench/soak-probe.mjs): the heap at any
// given second also holds garbage, which swings by a hundred megabytes between collections,
// and V8 may let a minute pass without one, so only collected figures compare.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Warren } from '@warren/client';
import { type Simulation, simulate } from '../packages/cli/src/node/fleet-simulator.js';
import { initWarren, serveWarren } from './warren-process.js';

const { values: flags } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    devices: { type: 'string', default: '10000' },
    group: { type: 'string', default: '100' },
    db: { type: 'string' },
    instances: { type: 'string', default: '1' },
    warmup: { type: 'string', default: '60' },
    'max-warmup': { type: 'string', default: '300' },
  },
});
const SECONDS = Number(flags.seconds);
const DEVICES = Number(flags.devices);
const GROUP = Number(flags.group);
const INSTANCES = Number(flags.instances);
const WARMUP = Number(flags.warmup);
const MAX_WARMUP = Number(flags['max-warmup']);
const GROUPS = Math.ceil(DEVICES / GROUP);
if (!(SECONDS > 0 && DEVICES >= GROUP && GROUP >= 2 && INSTANCES >= 1)) throw new Error('bad flags');
if (INSTANCES > 1 && !flags.db?.startsWith('postgres')) throw new Error('--instances > 1 needs --db postgres://…');

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const mb = (bytes: number) => `${fmt(bytes / 2 ** 20, 1)} MB`;

/** Latencies and errors per call, for the whole measured run and the current 5 s window. */
class Calls {
  private readonly samples = new Map<string, number[]>();
  private readonly errors = new Map<string, number>();
  private readonly window = new Map<string, number>();
  readonly firstErrors: string[] = [];
  measuring = false;

  record(call: string, ms: number, error?: string): void {
    this.window.set(call, (this.window.get(call) ?? 0) + 1);
    if (!this.measuring) return;
    if (error) {
      this.errors.set(call, (this.errors.get(call) ?? 0) + 1);
      if (this.firstErrors.length < 10) this.firstErrors.push(`${call}: ${error}`);
    }
    const list = this.samples.get(call);
    if (list) list.push(ms);
    else this.samples.set(call, [ms]);
  }

  takeWindow(): Map<string, number> {
    const out = new Map(this.window);
    this.window.clear();
    return out;
  }

  summary(seconds: number): { call: string; rate: number; p50: number; p99: number; errors: number }[] {
    return [...this.samples].map(([call, list]) => {
      list.sort((a, b) => a - b);
      return {
        call,
        rate: list.length / seconds,
        p50: list[Math.floor(list.length / 2)] ?? Number.NaN,
        p99: list[Math.floor(list.length * 0.99)] ?? Number.NaN,
        errors: this.errors.get(call) ?? 0,
      };
    });
  }
}

const calls = new Calls();

/** The fleet's fetch: every node call timed and classified; a status ≥ 400 (304 is fine) is an error. */
const fleetFetch: typeof fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  const call = `${init?.method ?? 'GET'} ${url.pathname}${url.search.includes('delta') ? '?delta' : ''}`;
  const started = performance.now();
  try {
    const response = await fetch(input, init);
    calls.record(call, performance.now() - started, response.status >= 400 ? `status ${response.status}` : undefined);
    return response;
  } catch (error) {
    calls.record(call, performance.now() - started, String(error));
    throw error;
  }
};

function policy(round: number): string {
  const owners = Array.from({ length: GROUPS }, (_, g) => `"tag:g${g}": []`).join(', ');
  const rules = Array.from(
    { length: GROUPS },
    (_, g) => `{ "action": "accept", "src": ["tag:g${g}"], "dst": ["tag:g${g}:443"] }`,
  ).join(',\n    ');
  // The round changes the text (a new version, a new netmap epoch), not what it means.
  return `// soak round ${round}\n{\n  "tagOwners": { ${owners} },\n  "acls": [\n    ${rules}\n  ],\n}\n`;
}

/** An API client in a closed loop until `stop`: one call after another, each timed. */
async function loop(call: string, stop: { done: boolean }, once: (i: number) => Promise<Response>): Promise<void> {
  for (let i = 0; !stop.done; i++) {
    const started = performance.now();
    try {
      const res = await once(i);
      await res.arrayBuffer();
      calls.record(call, performance.now() - started, res.status >= 400 ? `status ${res.status}` : undefined);
    } catch (error) {
      calls.record(call, performance.now() - started, String(error));
    }
  }
}

interface MemorySample {
  at: number;
  rss: number;
  heapUsed: number;
  /** Heap just after the last full collection, and how many there have been. */
  liveHeap?: number;
  fullCollections: number;
  /** Taken right after a full collection the benchmark asked for (collectedSample). */
  collected: boolean;
}

/** Asks the server for a full collection and returns the sample it writes right after. */
async function collectedSample(server: (typeof servers)[number]): Promise<MemorySample | undefined> {
  const asked = Date.now();
  server.child.kill('SIGUSR2');
  for (let waited = 0; waited < 10_000; waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const found = readFileSync(server.probe, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as MemorySample)
      .findLast((sample) => sample.collected && sample.at >= asked);
    if (found) return found;
  }
  return undefined;
}

function lastSample(file: string): MemorySample | undefined {
  // The probe's other lines (a change read, `feed`) carry no memory figures.
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as MemorySample & { feed?: unknown })
    .findLast((sample) => sample.feed === undefined);
}

const dir = mkdtempSync(join(tmpdir(), 'warren-bench-soak-'));
const db = flags.db ?? `sqlite:${join(dir, 'warren.db')}`;
const label = db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
const servers: { url: string; child: import('node:child_process').ChildProcess; probe: string }[] = [];
let fleet: Simulation[] = [];
try {
  const initKey = initWarren(db);
  for (let i = 0; i < INSTANCES; i++) {
    const probe = join(dir, `memory-${i}.jsonl`);
    writeFileSync(probe, '');
    const server = await serveWarren(db, {
      nodeArgs: ['--expose-gc', '--import', join(import.meta.dirname, 'soak-probe.mjs')],
      env: { WARREN_SOAK_PROBE: probe },
    });
    servers.push({ ...server, probe });
  }
  // A key whose limit is out of the way (the initial one allows 100 calls a minute).
  const key = await new Warren({ url: servers[0]!.url, apiKey: initKey }).keys.create({
    type: 'api',
    name: 'soak',
    scopes: ['all'],
    rateLimit: 1_000_000,
  });
  const apiKey = key.key as string;
  const admin = new Warren({ url: servers[0]!.url, apiKey });
  await admin.acl.set(policy(0));
  console.log(
    `soak benchmark: ${fmt(DEVICES)} devices in groups of ${GROUP}, ${INSTANCES} instance(s) on ${label}, ` +
      `${SECONDS} s measured after a warm-up of at least ${WARMUP} s`,
  );

  // Enroll group by group, each group's agents on one instance, round robin.
  const started = performance.now();
  for (let g = 0; g < GROUPS; g++) {
    const server = servers[g % INSTANCES]!;
    const authKey = (await admin.keys.create({ type: 'auth', reusable: true, tags: [`tag:g${g}`], expiresIn: '1d' }))
      .key as string;
    fleet.push(
      await simulate({
        server: server.url,
        authKey,
        count: Math.min(GROUP, DEVICES - g * GROUP),
        hostnamePrefix: `g${g}`,
        // Started once the whole fleet is in: every enrollment moves the netmap epoch, and the
        // heartbeats of devices already in would rebuild the view after each one.
        heartbeat: false,
        heartbeatMs: [15_000, 20_000],
        // Shared gates per group would let 100 groups flood the server: the fleet's own pacing.
        netmapConcurrency: 1,
        requestConcurrency: 4,
        fetch: fleetFetch,
      }),
    );
    const failed = fleet.reduce((sum, sim) => sum + sim.failed, 0);
    if (failed) throw new Error(`${failed} enrollments failed: ${JSON.stringify(fleet.at(-1)!.reasons)}`);
  }
  console.log(`enrolled ${fmt(DEVICES)} devices in ${fmt((performance.now() - started) / 1000, 1)} s`);
  for (const sim of fleet) for (const agent of sim.agents) agent.start(Math.random() * 20_000);

  const stop = { done: false };
  const auth = { authorization: `Bearer ${apiKey}` };
  const url = (i: number) => servers[i % INSTANCES]!.url;
  const clients = [
    ...[0, 1].map((c) =>
      loop('API GET /v1/devices?tag=…', stop, (i) =>
        fetch(`${url(i + c)}/v1/devices?tag=tag:g${(i * 7 + c) % GROUPS}`, { headers: auth }),
      ),
    ),
    loop('API PUT /v1/acl', stop, (i) =>
      fetch(`${url(i)}/v1/acl`, {
        method: 'PUT',
        headers: { ...auth, 'content-type': 'application/hujson' },
        body: policy(i + 1),
      }),
    ),
    loop('API POST /v1/keys', stop, (i) =>
      fetch(`${url(i)}/v1/keys`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'auth', tags: ['tag:g0'], expiresIn: '1h' }),
      }),
    ),
  ];

  // The warm-up lasts --warmup seconds and until 95% of the devices hold their first netmap (at
  // most --max-warmup): until then the server's per-device state (each device's netmap version
  // and the peers last sent to it, for deltas; about 4 kB a device at groups of 100) is still
  // filling, which is growth by design. The last few percent take as long again to fetch theirs
  // (an agent that finds its group's netmap slot taken waits for its next heartbeat) and fill
  // well under 1% of the heap. At least a minute, because the process's memory grows into the
  // load for about that long after the fleet starts: V8 sizes the heap it reserves to the
  // rate of allocation, and keeps what it reserved after a collection. Once every netmap was
  // fetched within 40 s (SQLite), a baseline taken then read that settling as growth: RSS went
  // from 270 to 540 MB in the first 35 s and swung between 450 and 585 MB for the next 30.
  const agents = fleet.flatMap((sim) => sim.agents);
  const warmWhenHeld = Math.ceil(agents.length * 0.95);
  const holding = () => agents.reduce((n, agent) => n + (agent.netmap ? 1 : 0), 0);
  const baseline: (MemorySample | undefined)[] = [];
  const peak = servers.map(() => ({ rss: 0, heapUsed: 0 }));
  let measuredFrom: number | undefined;
  const t0 = performance.now();
  for (let t = 5; measuredFrom === undefined || t <= measuredFrom + SECONDS; t += 5) {
    await new Promise((resolve) => setTimeout(resolve, t0 + t * 1000 - performance.now()));
    const window = calls.takeWindow();
    const rate = [...window].map(([call, n]) => `${call} ${fmt(n / 5)}/s`).join(', ');
    const warm = measuredFrom === undefined;
    const memory = servers.map((server, i) => {
      const sample = lastSample(server.probe);
      if (!sample) return '?';
      if (!warm) {
        peak[i]!.rss = Math.max(peak[i]!.rss, sample.rss);
        peak[i]!.heapUsed = Math.max(peak[i]!.heapUsed, sample.heapUsed);
      }
      const live = sample.liveHeap ? ` (live ${mb(sample.liveHeap)})` : '';
      return `#${i} rss ${mb(sample.rss)} heap ${mb(sample.heapUsed)}${live}`;
    });
    const held = holding();
    const phase = warm ? `(warm-up, ${fmt(held)}/${fmt(agents.length)} netmaps held) ` : '';
    console.log(`${String(t).padStart(4)} s ${phase}${memory.join(' · ')} | ${rate}`);
    if (warm && t >= WARMUP && (held >= warmWhenHeld || t >= MAX_WARMUP)) {
      if (held < warmWhenHeld) console.log(`warm-up cut at ${MAX_WARMUP} s with ${fmt(held)} netmaps held`);
      for (const server of servers) baseline.push(await collectedSample(server));
      calls.measuring = true;
      measuredFrom = t;
    }
  }
  stop.done = true;
  await Promise.all(clients);
  const end = await Promise.all(servers.map(collectedSample));

  console.log(`\n${'call'.padEnd(36)} ${'calls/s'.padStart(9)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} errors`);
  let errors = 0;
  for (const row of calls.summary(SECONDS).sort((a, b) => a.call.localeCompare(b.call))) {
    errors += row.errors;
    console.log(
      `${row.call.padEnd(36)} ${fmt(row.rate, 1).padStart(9)} ${fmt(row.p50, 2).padStart(8)} ${fmt(row.p99, 2).padStart(8)} ${row.errors}`,
    );
  }
  if (calls.firstErrors.length) console.log(`first errors:\n  ${calls.firstErrors.join('\n  ')}`);
  console.log(`errors: ${errors} (target 0): ${errors === 0 ? 'met' : 'MISSED'}`);
  servers.forEach((_, i) => {
    const from = baseline[i];
    const to = end[i];
    if (!from || !to) return;
    const rss = to.rss / from.rss - 1;
    const heap = to.heapUsed / from.heapUsed - 1;
    console.log(
      `instance #${i}, right after a full collection at each end: RSS ${mb(from.rss)} → ${mb(to.rss)} ` +
        `(growth ${fmt(rss * 100, 1)}%), heap ${mb(from.heapUsed)} → ${mb(to.heapUsed)} (growth ${fmt(heap * 100, 1)}%); ` +
        `peaks as sampled: RSS ${mb(peak[i]!.rss)}, heap ${mb(peak[i]!.heapUsed)}; ` +
        `target < 10%: ${rss < 0.1 && heap < 0.1 ? 'met' : 'MISSED'}`,
    );
  });
} finally {
  await Promise.all(fleet.map((sim) => sim.stop(false)));
  fleet = [];
  for (const server of servers) server.child.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);

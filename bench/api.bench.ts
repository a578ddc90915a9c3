// API benchmark: `npm run bench -- api [--devices 10000] [--duration 10] [--connections 32] [--db URL]`.
//
// Measures the management API from outside, as a user's load would reach it: `warren serve`
// runs in its own process (SQLite file by default, or the PostgreSQL URL in --db), `wrk` loads
// it over loopback, and a raw node:http server that checks the same bearer header and returns
// the same bytes is loaded the same way in the same run: that server is the baseline, and
// Warren's throughput is reported as a ratio of it.
//
// Rows (10,000 devices enrolled over the node protocol; the listed ones kept online by heartbeats):
//   1. GET /v1/devices?tag=tag:sim&tag=tag:canary&online=true   — 50 devices returned
//   2. GET /v1/devices?tag=tag:k1000&online=true                 — 1,000 devices returned
//   3. GET /v1/network
// Then the rate limiter on its own: microseconds per hit for a key limited to 100/min with a
// full window against one limited to 1,000,000/min with 100,000 hits in its window (the median
// of five rounds taken in turn).
//
// Needs `wrk` (Debian: `apt-get install wrk`).

import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Warren } from '@warren/client';
import { type Simulation, simulate } from '../packages/cli/src/node/fleet-simulator.js';
import type { RateLimiter } from '../packages/server/src/core/context.js';
import { MemoryRateLimiter, PostgresRateLimiter } from '../packages/server/src/edge/rate-limiter.js';
import { openStorage } from '../packages/server/src/storage/database.js';
import { rawServer, requireWrk, wrk } from './load.js';
import { initWarren, serveWarren } from './warren-process.js';

const { values: flags } = parseArgs({
  options: {
    devices: { type: 'string', default: '10000' },
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    db: { type: 'string' },
  },
});
const DEVICES = Number(flags.devices);
const DURATION = Number(flags.duration);
const CONNECTIONS = Number(flags.connections);
const load = { threads: 2, connections: CONNECTIONS, seconds: DURATION };
if (!(DEVICES >= 1050)) throw new Error('--devices must be at least 1050 (50 canaries and 1,000 listed devices)');

const root = join(import.meta.dirname, '..');
const _tsx = join(root, 'node_modules', '.bin', 'tsx');
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

requireWrk('api');

async function startWarren(db: string): Promise<{ url: string; apiKey: string; child: ChildProcess }> {
  const apiKey = initWarren(db);
  return { ...(await serveWarren(db)), apiKey };
}

/** Enrolls the fleet; the 1,050 listed devices heartbeat for the rest of the run. */
async function enroll(url: string, admin: Warren): Promise<Simulation[]> {
  const { text } = await admin.acl.getText();
  const owners = '"tagOwners": { "tag:sim": [], "tag:canary": [], "tag:k1000": [], "tag:bulk": [] },';
  await admin.acl.set(text.replace(/"tagOwners": \{[^}]*\},/, owners));
  const key = async (tags: string[]) =>
    (await admin.keys.create({ type: 'auth', reusable: true, tags, expiresIn: '1d' })).key as string;
  const groups: [string[], number, string, boolean][] = [
    [['tag:sim', 'tag:canary'], 50, 'canary', true],
    [['tag:sim', 'tag:k1000'], 1000, 'k', true],
    [['tag:sim', 'tag:bulk'], DEVICES - 1050, 'bulk', false],
  ];
  const simulations: Simulation[] = [];
  for (const [tags, count, prefix, heartbeat] of groups) {
    const sim = await simulate({
      server: url,
      authKey: await key(tags),
      count,
      hostnamePrefix: prefix,
      heartbeat,
      heartbeatMs: [20_000, 30_000],
      netmap: false,
      connections: false,
    });
    if (sim.failed) throw new Error(`${sim.failed} enrollments failed: ${JSON.stringify(sim.failures)}`);
    simulations.push(sim);
  }
  // One heartbeat each now, so the listed devices are online before the first measurement.
  let next = 0;
  const listed = simulations.slice(0, 2).flatMap((sim) => sim.agents);
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < listed.length) await listed[next++]!.tick();
    }),
  );
  return simulations;
}

const ROWS = [
  {
    name: 'GET /v1/devices?tag=…&online=true (50)',
    path: '/v1/devices?tag=tag:sim&tag=tag:canary&online=true',
    rows: 50,
  },
  { name: 'GET /v1/devices?tag=…&online=true (1,000)', path: '/v1/devices?tag=tag:k1000&online=true', rows: 1000 },
  { name: 'GET /v1/network', path: '/v1/network', rows: 0 },
];

async function measureApi(dir: string, db: string, label: string): Promise<void> {
  const { url, apiKey: initKey, child } = await startWarren(db);
  try {
    const admin = new Warren({ url, apiKey: initKey });
    // A key whose limit is out of the way, so the load measures the request path, not 429s.
    const bench = await admin.keys.create({ type: 'api', name: 'bench', scopes: ['read'], rateLimit: 1_000_000 });
    const apiKey = bench.key as string;
    const started = performance.now();
    const fleet = await enroll(url, admin);
    console.log(`${label}: ${fmt(DEVICES)} devices enrolled in ${fmt((performance.now() - started) / 1000, 1)} s`);

    const bodies = new Map<string, Buffer>();
    for (const row of ROWS) {
      const response = await fetch(`${url}${row.path}`, { headers: { authorization: `Bearer ${apiKey}` } });
      const body = Buffer.from(await response.arrayBuffer());
      if (!response.ok) throw new Error(`${row.path}: ${response.status} ${body}`);
      if (row.rows && (JSON.parse(body.toString()) as { devices: unknown[] }).devices.length !== row.rows) {
        throw new Error(`${row.path} returned ${body.length} bytes without the expected ${row.rows} devices`);
      }
      bodies.set(row.path, body);
    }
    const raw = await rawServer(dir, apiKey, bodies);
    console.log(
      `${'call'.padEnd(44)} ${'Warren req/s'.padStart(12)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ` +
        `${'raw req/s'.padStart(10)} ${'ratio'.padStart(6)}  bytes  errors`,
    );
    for (const row of ROWS) {
      // One call first, answered only once the previous load's queued requests are done.
      await fetch(`${url}${row.path}`, { headers: { authorization: `Bearer ${apiKey}` } }).then((r) => r.arrayBuffer());
      const warren = await wrk(`${url}${row.path}`, apiKey, load);
      const baseline = await wrk(`${raw.url}${row.path}`, apiKey, load);
      console.log(
        `${row.name.padEnd(44)} ${fmt(warren.rps).padStart(12)} ${fmt(warren.p50, 2).padStart(8)} ` +
          `${fmt(warren.p99, 2).padStart(8)} ${fmt(baseline.rps).padStart(10)} ${fmt(warren.rps / baseline.rps, 2).padStart(6)}  ` +
          `${fmt(bodies.get(row.path)!.length)}  ${warren.errors}`,
      );
    }
    raw.child.kill('SIGTERM');
    await Promise.all(fleet.map((sim) => sim.stop(false)));
  } finally {
    child.kill('SIGTERM');
  }
}

/** Microseconds per hit of a limiter: a full 100/min window against 100,000 live hits of 1,000,000/min. */
async function measureLimiter(db: string, label: string): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-limiter-'));
  const storage = await openStorage(db.startsWith('postgres') ? db : `sqlite:${join(dir, 'limiter.db')}`);
  let now = Date.now();
  const clock = { now: () => now };
  const limiter: RateLimiter =
    storage.dialect === 'postgres' ? new PostgresRateLimiter(storage.db, clock) : new MemoryRateLimiter(clock);
  const fill = async (bucket: string, limit: number, hits: number, spanMs: number) => {
    const start = now;
    for (let i = 0; i < hits; i++) {
      now = start + Math.floor((i * spanMs) / hits);
      await limiter.hit(bucket, limit);
    }
  };
  const time = async (bucket: string, limit: number, times: number) => {
    const started = performance.now();
    for (let i = 0; i < times; i++) {
      now += 1;
      await limiter.hit(bucket, limit);
    }
    return ((performance.now() - started) * 1000) / times;
  };
  const big = storage.dialect === 'postgres' ? 20_000 : 100_000;
  const t0 = now;
  await fill('key:small', 100, 100, 50_000);
  now = t0;
  await fill('key:large', 1_000_000, big, 50_000);
  const times = storage.dialect === 'postgres' ? 500 : 200_000;
  // Rounds taken in turn and their medians: a single pass of each measured the machine's
  // moment (and the JIT's) as much as the limiter, and moved the ratio between 0.9 and 1.9.
  const rounds: { small: number[]; large: number[] } = { small: [], large: [] };
  for (let round = 0; round < 5; round++) {
    rounds.small.push(await time('key:small', 100, times));
    rounds.large.push(await time('key:large', 1_000_000, times));
  }
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
  const small = median(rounds.small);
  const large = median(rounds.large);
  console.log(
    `${label} rate limiter: ${fmt(small, 2)} µs/hit at 100/min (window full) · ${fmt(large, 2)} µs/hit at ` +
      `1,000,000/min with ${fmt(big)} hits in the window · ratio ${fmt(large / small, 2)} (1.0 = same cost)`,
  );
  limiter.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
}

const dir = mkdtempSync(join(tmpdir(), 'warren-bench-api-'));
const db = flags.db ?? `sqlite:${join(dir, 'warren.db')}`;
const label = db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
console.log(`api benchmark: ${fmt(DEVICES)} devices, wrk -t2 -c${CONNECTIONS} -d${DURATION}s, ${label}`);
try {
  await measureApi(dir, db, label);
  await measureLimiter(db, label);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.exit(0);

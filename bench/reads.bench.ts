// Reads benchmark: `npm run bench -- reads [--devices 1000] [--duration 5] [--connections 32]
// [--db sqlite|postgres|URL] [--only TEXT] [--profile DIR] [--smoke]`.
//
// `--db postgres` (or WARREN_BENCH_DB=postgres) creates a database of its own on the server at
// WARREN_BENCH_POSTGRES_URL or WARREN_TEST_POSTGRES_URL (`bash .ci/postgres.sh` prints one) and
// drops it afterwards; a full postgres:// URL is used as it is (it must hold no network yet).
// `--only` measures only the calls whose path contains the text, or one of several texts separated
// by commas (for profiling one row, or comparing a few builds in turn).
// `--profile DIR` writes a CPU profile of the server for each call's load (bench/profile-probe.mjs:
// the window wrk loads it, nothing else) as DIR/<call>.cpuprofile.
// `npx tsx bench/profile-summary.ts DIR/<call>.cpuprofile` reads one as time per request by
// stage of the pipeline and by function.
//
// Every GET of the committed OpenAPI document (docs/openapi.json), read from it at run time so a
// new one is measured without anyone listing it, every GET of `/api/v2` (Tailscale's API, not in
// that document: read from the server's own route table, for the same reason), plus the query
// variants users lean on (`?fields=all`, `?online=false`, `?limit=100`). `warren serve` runs in its own process on a
// SQLite file (or --db), with --devices enrolled devices (half online, some serving routes), a
// webhook, a policy history, and the audit entries and events all that made. Each call is loaded
// with `wrk -t1` from outside, then a raw node:http server that checks the same bearer header
// and answers the same bytes (bench/raw-server.ts) is loaded the same way in the same run: the
// ratio is Warren's throughput over that baseline's. Beside it, each server's CPU time per request
// over its window (every thread, from /proc), all of it and its user part: on a shared machine
// throughput depends on the share of the cores a run gets, CPU time per request much less, and
// user time least (the kernel's loopback work lands on whichever process runs). The `fleet` column
// is the part of Warren's figure the fleet's heartbeats take (Warren's CPU time per second while
// the raw server is loaded, over the same window): at 10,000 devices a slow row's CPU per request
// is mostly that, divided among fewer requests.
//
// Targets per call: ratio ≥ 0.25, p99 ≤ 25 ms, and no stalls (p99 ≤ 3 × p50). The run exits 1
// when a call falls short of one, or answers anything but 200 under load. The raw server's own
// p50 and p99 are printed beside Warren's, and a stall it had too is marked `(raw too)`: still
// a miss, but one the machine shares with the floor. With --smoke (CI, at a
// small size) only the latter fails it, and the raw baseline is left out: every call is still
// loaded, four at a time. Figures come from the full size on a quiet machine; the load average
// is printed with them, since on a shared machine it says how far to trust them.
//
// Left out: `/v1/node/netmap`, the device protocol's read, with its own credential and a
// per-device rate limit (measured by `npm run bench -- netmap`).
//
// Needs `wrk` (Debian: `apt-get install wrk`).

import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Warren } from '@warren/client';
import pg from 'pg';
import { Agent, randomNodeKey } from '../packages/cli/src/node/agent.js';
import { gatedFetch, pool } from '../packages/cli/src/node/concurrency.js';
import { buildApp } from '../packages/server/src/app.js';
import type { Actor } from '../packages/server/src/core/actor.js';
import { newRequestId } from '../packages/server/src/http/request-id.js';
import { type Clock, systemClock } from '../packages/server/src/lib/time.js';
import { enroll } from '../packages/server/src/modules/devices/enrollment.service.js';
import { usableAuthKey } from '../packages/server/src/modules/keys/auth-keys.js';
import { ONLINE_WINDOW_MS } from '../packages/server/src/modules/network/online.js';
import { openStorage, type Storage } from '../packages/server/src/storage/database.js';
import { type Load, rawServer, requireWrk, treeCpuUs, wrk } from './load.js';
import { initWarren, serveWarren } from './warren-process.js';

const { values: flags } = parseArgs({
  options: {
    devices: { type: 'string', default: '1000' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '32' },
    db: { type: 'string', default: process.env.WARREN_BENCH_DB ?? 'sqlite' },
    only: { type: 'string' },
    profile: { type: 'string' },
    smoke: { type: 'boolean', default: false },
  },
});
const DEVICES = Number(flags.devices);
const DURATION = Number(flags.duration);
const CONNECTIONS = Number(flags.connections);
/** In a smoke run four calls are loaded at once, each with a quarter of the connections. */
const BATCH = flags.smoke ? 4 : 1;
const load = { threads: 1, connections: Math.max(1, Math.floor(CONNECTIONS / BATCH)), seconds: DURATION };
if (!(DEVICES >= 10)) throw new Error('--devices must be at least 10');
// A profile is of one call's window: the smoke loads several calls at once.
if (flags.profile && flags.smoke) throw new Error('--profile and --smoke do not go together');

const TARGET = { ratio: 0.25, p99Ms: 25, stall: 3 };
/**
 * Seconds each server is loaded with a call, unmeasured, right before its measurement: the
 * first calls of a run otherwise measured V8 compiling the request path (the first row,
 * `/v1/network`, took 511 µs of server CPU per request against 149–240 for the rows after it in
 * one profiled run). The raw server is warmed the same way.
 */
const WARMUP_S = 1;
/** Query variants measured beside each path's plain call. */
const VARIANTS: Record<string, string[]> = {
  '/v1/devices': ['?fields=all', '?online=false', '?online=true'],
  '/v1/logs/audit': ['?limit=100'],
  '/v1/events': ['?limit=100'],
  '/v1/logs/connections': ['?limit=100'],
  '/api/v2/tailnet/{tailnet}/devices': ['?fields=all'],
  '/api/v2/device/{id}': ['?fields=all'],
};
const SKIPPED = new Set(['/v1/node/netmap']);

const root = join(import.meta.dirname, '..');
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

requireWrk('reads');

/** Every GET of the OpenAPI document, with its path parameters, in document order. */
function documentedReads(): { path: string; params: string[] }[] {
  const document = JSON.parse(readFileSync(join(root, 'docs', 'openapi.json'), 'utf8')) as {
    paths: Record<string, { get?: unknown }>;
  };
  return Object.entries(document.paths)
    .filter(([path, item]) => item.get && !SKIPPED.has(path))
    .map(([path]) => ({ path, params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string) }));
}

/**
 * Every GET of `/api/v2`, in the OpenAPI spelling (`{id}`), from the route table of an app
 * built here on a scratch database: that API is not in the document, and a route added to it
 * is measured without anyone listing it.
 */
async function tailscaleReads(dir: string): Promise<{ path: string; params: string[] }[]> {
  const storage = await openStorage(`sqlite:${join(dir, 'routes.db')}`);
  const app = await buildApp({ storage, console: false });
  try {
    await app.ready();
    return app.routeTable.routes
      .filter((route) => route.method === 'GET' && route.url.startsWith('/api/v2/'))
      .map((route) => route.url.replace(/:(\w+)/g, '{$1}'))
      .map((path) => ({ path, params: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string) }));
  } finally {
    await app.close();
    await storage.close();
  }
}

/**
 * Enrolls `count` devices with the auth key `secret` in this process, through the enrollment
 * service the node protocol's register call runs (the same unit of work: the device row, its
 * tags and routes, the audit entry, the events; the node credential generated and stored
 * hashed as any enrollment stores it), without the HTTP round trip and the rate limit of each:
 * enrolling 10,000 devices over the API took longer than the whole benchmark. Returns an agent
 * per device holding its credential, for the fleet's heartbeats.
 */
async function seed(
  storage: Storage,
  url: string,
  secret: string,
  count: number,
  prefix: string,
  advertiseRoutes: string[] | undefined,
  fleetFetch: typeof fetch,
  clock: Clock,
): Promise<Agent[]> {
  const key = await usableAuthKey(storage.db, secret, Date.now());
  if (key instanceof Error) throw key;
  const ctx = { db: storage.db, clock };
  const agents: Agent[] = [];
  const indexes = Array.from({ length: count }, (_, i) => i);
  // PostgreSQL serialises one network's enrollments on its row; a few in flight hide the round trips.
  await pool(indexes, storage.dialect === 'postgres' ? 8 : 1, async (i) => {
    const hostname = `${prefix}-${i + 1}`;
    const nodeKey = randomNodeKey();
    const actor: Actor = {
      networkId: key.network_id,
      type: 'device',
      id: null,
      name: null,
      requestId: newRequestId(),
      clientAddr: '127.0.0.1',
      request: { method: 'POST', path: '/v1/node/register', status: 201 },
    };
    const { nodeToken } = await enroll(ctx, actor, key, {
      hostname,
      os: 'linux',
      nodeKey,
      clientVersion: '1.0.0',
      ...(advertiseRoutes ? { advertiseRoutes } : {}),
    });
    agents.push(
      new Agent({
        server: url,
        hostname,
        nodeKey,
        nodeToken,
        os: 'linux',
        heartbeatMs: [20_000, 30_000],
        netmap: false,
        connections: false,
        fetch: fleetFetch,
        ...(advertiseRoutes ? { advertiseRoutes } : {}),
        log: (line) => console.error(line),
      }),
    );
  });
  return agents;
}

/** A network worth reading: devices (half online, some routers), a webhook, a policy history. */
async function populate(
  db: string,
  url: string,
  admin: Warren,
  adminKey: string,
): Promise<{ fleet: Agent[]; ids: Record<string, string> }> {
  const { text } = await admin.acl.getText();
  await admin.acl.set(text.replace(/"tagOwners": \{[^}]*\},/, '"tagOwners": { "tag:sim": [], "tag:router": [] },'));
  const key = async (tags: string[]) =>
    (await admin.keys.create({ type: 'auth', reusable: true, tags, expiresIn: '1d' })).key as string;
  const routers = Math.max(1, Math.floor(DEVICES / 100));
  // The offline half is enrolled as of two online windows ago, so it is offline from the start,
  // as a fleet's long-silent devices are. Enrolled now, it stayed online for a minute and then
  // timed out all at once in the middle of the measurements (the event detector announcing
  // each), and whichever calls were measured then measured the fleet's catch-up, not the call.
  const past: Clock = { now: () => Date.now() - 2 * ONLINE_WINDOW_MS };
  const groups: [string[], number, string, boolean, string[] | undefined, Clock][] = [
    [['tag:sim'], DEVICES - Math.floor(DEVICES / 2), 'offline', false, undefined, past],
    [['tag:sim', 'tag:router'], routers, 'router', true, ['10.0.0.0/24'], systemClock],
    [['tag:sim'], Math.floor(DEVICES / 2) - routers, 'online', true, undefined, systemClock],
  ];
  const fleetFetch = gatedFetch(fetch, 64);
  const online: Agent[] = [];
  const started = Date.now();
  const storage = await openStorage(db);
  try {
    for (const [tags, count, prefix, heartbeat, advertiseRoutes, clock] of groups) {
      const agents = await seed(storage, url, await key(tags), count, prefix, advertiseRoutes, fleetFetch, clock);
      if (heartbeat) online.push(...agents);
    }
  } finally {
    await storage.close();
  }
  console.error(`enrolled ${fmt(DEVICES)} devices in ${fmt((Date.now() - started) / 1000, 1)} s`);
  // One heartbeat each through the server, then every 20–30 s, the first ones staggered.
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < online.length) await online[next++]!.tick();
    }),
  );
  for (const agent of online) agent.start(Math.random() * 30_000);
  // Single sign-on settings to read back (the issuer is not contacted until someone signs in).
  const sso = await fetch(`${url}/v1/network/sso`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      issuer: 'https://login.example.com',
      clientId: 'warren',
      clientSecret: 'not-a-real-secret',
    }),
  });
  if (!sso.ok) throw new Error(`PUT /v1/network/sso: ${sso.status} ${await sso.text()}`);
  const webhook = await admin.webhooks.create({ url: 'http://127.0.0.1:9/hook', events: ['device.created'] });
  const devices = await admin.devices.list();
  const router = devices.find((device) => device.hostname.startsWith('router-'));
  if (!router) throw new Error('no router among the enrolled devices');
  const history = await admin.acl.history();
  const users = await admin.users.list();
  return {
    fleet: online,
    ids: {
      // A router: its detail record and routes are the larger ones.
      '/v1/devices/{id}': router.id,
      '/api/v2/device/{id}': router.id,
      '/api/v2/device/{id}/routes': router.id,
      '/api/v2/users/{id}': users[0]!.id,
      '/v1/webhooks/{id}': webhook.id,
      '/v1/webhooks/{id}/deliveries': webhook.id,
      '/v1/acl/history/{version}': String(history[0]!.version),
    },
  };
}

/**
 * The database to serve from: a SQLite file in `dir`, a fresh PostgreSQL database (dropped by
 * the returned `drop`), or the URL given.
 */
async function benchDatabase(dir: string): Promise<{ db: string; drop: () => Promise<void> }> {
  const choice = flags.db;
  if (choice === 'sqlite') return { db: `sqlite:${join(dir, 'warren.db')}`, drop: async () => {} };
  if (choice !== 'postgres') return { db: choice, drop: async () => {} };
  const server = process.env.WARREN_BENCH_POSTGRES_URL ?? process.env.WARREN_TEST_POSTGRES_URL;
  if (!server) throw new Error('--db postgres needs WARREN_BENCH_POSTGRES_URL (bash .ci/postgres.sh prints one)');
  const name = `warren_bench_reads_${process.pid}`;
  const admin = async (sql: string) => {
    const client = new pg.Client({ connectionString: server });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`create database ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return { db: url.toString(), drop: () => admin(`drop database if exists ${name} with (force)`) };
}

const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');

/** The path of each call, concrete (`{tailnet}` as `-`, ids filled in), with its query variants. */
function concreteCalls(reads: { path: string; params: string[] }[], ids: Record<string, string>): string[] {
  const calls: string[] = [];
  for (const { path, params } of reads) {
    // `{tailnet}` is `-`, the key's own network, as Tailscale's clients send it.
    const withTailnet = path.replace('{tailnet}', '-');
    const id = ids[path];
    if (params.some((p) => p !== 'tailnet') && !id) {
      throw new Error(`no value for the parameters of ${path}: add one to populate()`);
    }
    const concrete = id ? withTailnet.replace(/\{\w+\}/, id) : withTailnet;
    calls.push(concrete, ...(VARIANTS[path] ?? []).map((query) => `${concrete}${query}`));
  }
  if (!flags.only) return calls;
  const texts = flags.only.split(',');
  return calls.filter((call) => texts.some((text) => call.includes(text)));
}

/**
 * The server's CPU time per request over its window, µs (not measured in a smoke run); for
 * Warren, `fleetUs` is the part of it the fleet's heartbeats would have taken anyway: Warren's
 * CPU time per second while the raw server is loaded right after (no call reaches Warren then,
 * the fleet's heartbeats do), times the window, per request of the window.
 */
type Measured = Load & { cpuUs?: number; userUs?: number; fleetUs?: number };

interface Row {
  call: string;
  warren: Measured;
  baseline?: Measured;
}

/** Profiles taken so far: the probe numbers its files the same way. */
let profilesTaken = 0;

/**
 * Starts the server's profiler (bench/profile-probe.mjs, toggled by SIGUSR2); the function
 * returned stops it and names the profile after the call, with the server's CPU time and the
 * requests of the window beside it (for bench/profile-summary.ts).
 */
async function startProfile(
  server: ChildProcess,
  dir: string,
): Promise<(call: string, requests: number) => Promise<void>> {
  const n = ++profilesTaken;
  server.kill('SIGUSR2');
  // The probe starts the profiler asynchronously; a few ms of the load unprofiled matter little.
  await new Promise((done) => setTimeout(done, 50));
  return async (call, requests) => {
    server.kill('SIGUSR2');
    const cpu = join(dir, `${n}.json`);
    for (let i = 0; i < 600 && !existsSync(cpu); i++) await new Promise((done) => setTimeout(done, 50));
    const { userUs, systemUs } = JSON.parse(readFileSync(cpu, 'utf8')) as { userUs: number; systemUs: number };
    const name = call.replace(/[^\w.-]+/g, '_').replace(/^_/, '');
    renameSync(join(dir, `${n}.cpuprofile`), join(dir, `${name}.cpuprofile`));
    // Beside the profile, for bench/profile-summary.ts to give µs per request.
    writeFileSync(join(dir, `${name}.cpu.json`), JSON.stringify({ userUs, systemUs, requests }));
    rmSync(cpu);
  };
}

const stalls = (load: Load) => load.p99 > TARGET.stall * load.p50;

/**
 * What a row misses of the targets (only errors count in a smoke run). A stall is marked when
 * the raw server stalled too in the same row: it is still a miss, but one the machine shares.
 */
function misses({ warren, baseline }: Row): string[] {
  const ratio = baseline ? warren.rps / baseline.rps : Number.NaN;
  return [
    warren.errors > 0 || !(warren.rps > 0) ? `${warren.errors} errors` : '',
    baseline && ratio < TARGET.ratio ? 'ratio' : '',
    baseline && warren.p99 > TARGET.p99Ms ? 'p99' : '',
    baseline && stalls(warren) ? (stalls(baseline) ? 'stalls (raw too)' : 'stalls') : '',
  ].filter(Boolean);
}

/** CPU time per request, all and user: `61/44 µs`. */
const cpu = (load: Measured | undefined) =>
  (load?.cpuUs === undefined ? '—' : `${fmt(load.cpuUs)}/${fmt(load.userUs ?? 0)} µs`).padStart(10);
/** The fleet's share of Warren's CPU time per request. */
const fleetCpu = (load: Measured) => (load.fleetUs === undefined ? '—' : `${fmt(load.fleetUs)} µs`).padStart(8);

/**
 * Loads `url` with wrk and reads the CPU time the server at `pid` (and its descendants) used
 * meanwhile, per request.
 */
async function loadServer(url: string, apiKey: string, pid: number | undefined): Promise<Measured> {
  const before = pid === undefined ? undefined : treeCpuUs(pid);
  const result: Measured = await wrk(url, apiKey, load);
  if (pid !== undefined && before && before.userUs > 0) {
    const after = treeCpuUs(pid);
    const requests = Math.max(1, result.requests);
    result.userUs = (after.userUs - before.userUs) / requests;
    result.cpuUs = result.userUs + (after.systemUs - before.systemUs) / requests;
  }
  return result;
}

function printRow(row: Row, bytes: number): void {
  const { call, warren, baseline } = row;
  const missed = misses(row);
  console.log(
    `${call.padEnd(44)} ${fmt(warren.rps).padStart(8)} ${fmt(warren.p50, 2).padStart(7)} ${fmt(warren.p99, 2).padStart(7)} ` +
      `${(baseline ? fmt(baseline.rps) : '—').padStart(10)} ${(baseline ? fmt(baseline.p50, 2) : '—').padStart(7)} ` +
      `${(baseline ? fmt(baseline.p99, 2) : '—').padStart(7)} ${(baseline ? fmt(warren.rps / baseline.rps, 2) : '—').padStart(6)} ` +
      `${fmt(bytes).padStart(9)}  ${cpu(warren)} ${fleetCpu(warren)} ${cpu(baseline)}  ` +
      `${missed.length ? `short: ${missed.join(', ')}` : 'ok'}`,
  );
}

async function main(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-reads-'));
  const { db, drop } = await benchDatabase(dir);
  const label = db.startsWith('postgres') ? 'PostgreSQL' : 'SQLite';
  let child: ChildProcess | undefined;
  let raw: { url: string; child: ChildProcess } | undefined;
  let fleet: Agent[] = [];
  try {
    const initKey = initWarren(db);
    // A public URL: single sign-on settings (one of the reads) can only be stored with one.
    const profiles = flags.profile ? resolve(flags.profile) : undefined;
    if (profiles) mkdirSync(profiles, { recursive: true });
    const served = await serveWarren(db, {
      env: {
        WARREN_WEBHOOKS_ALLOW_PRIVATE: 'true',
        WARREN_PUBLIC_URL: 'https://warren.example.com',
        ...(profiles ? { WARREN_PROFILE_DIR: profiles } : {}),
      },
      ...(profiles ? { nodeArgs: ['--import', join(import.meta.dirname, 'profile-probe.mjs')] } : {}),
    });
    child = served.child;
    const { url } = served;
    const admin = new Warren({ url, apiKey: initKey });
    const bench = await admin.keys.create({ type: 'api', name: 'bench', scopes: ['read'], rateLimit: 1_000_000 });
    const apiKey = bench.key as string;
    const populated = await populate(db, url, admin, initKey);
    fleet = populated.fleet;
    const calls = concreteCalls([...documentedReads(), ...(await tailscaleReads(dir))], {
      ...populated.ids,
      '/v1/keys/{id}': bench.id,
      '/api/v2/tailnet/{tailnet}/keys/{id}': bench.id,
    });
    const bodies = new Map<string, Buffer>();
    for (const call of calls) {
      const response = await fetch(`${url}${call}`, { headers: { authorization: `Bearer ${apiKey}` } });
      const body = Buffer.from(await response.arrayBuffer());
      if (response.status !== 200) throw new Error(`${call}: ${response.status} ${body}`);
      bodies.set(call, body);
    }
    if (!flags.smoke) raw = await rawServer(dir, apiKey, bodies);
    console.log(
      `reads benchmark: ${fmt(DEVICES)} devices, ${label}, wrk -t1 -c${load.connections} -d${DURATION}s` +
        `${flags.smoke ? `, smoke (no baseline, ${BATCH} calls at a time)` : ''}; load average ${loadAverage()}`,
    );
    console.log(
      `${'call'.padEnd(44)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ` +
        `${'raw req/s'.padStart(10)} ${'raw p50'.padStart(7)} ${'raw p99'.padStart(7)} ${'ratio'.padStart(6)} ${'bytes'.padStart(9)}  ` +
        `${'CPU/user'.padStart(10)} ${'fleet'.padStart(8)} ${'raw CPU'.padStart(10)}  verdict`,
    );
    /** Each server is loaded with the call briefly before it is measured (see WARMUP_S). */
    const warmUp = async (base: string, call: string) => {
      await wrk(`${base}${call}`, apiKey, { ...load, seconds: WARMUP_S });
    };
    const measure = async (call: string): Promise<Row> => {
      if (flags.smoke) {
        await fetch(`${url}${call}`, { headers: { authorization: `Bearer ${apiKey}` } }).then((r) => r.arrayBuffer());
      } else await warmUp(url, call);
      const profiled = profiles ? await startProfile(child!, profiles) : undefined;
      // The smoke loads several calls at once: no one call's CPU time.
      const warren = await loadServer(`${url}${call}`, apiKey, flags.smoke ? undefined : child!.pid);
      if (profiled) await profiled(call, warren.requests);
      // Warren serves only the fleet while raw is loaded: its CPU time then is the fleet's rate.
      const idleFrom = raw ? { cpu: treeCpuUs(child!.pid!), at: performance.now() } : undefined;
      if (raw) await warmUp(raw.url, call);
      const baseline = raw ? await loadServer(`${raw.url}${call}`, apiKey, raw.child.pid) : undefined;
      if (idleFrom && warren.cpuUs !== undefined) {
        const idle = treeCpuUs(child!.pid!);
        const perSecond =
          (idle.userUs + idle.systemUs - idleFrom.cpu.userUs - idleFrom.cpu.systemUs) /
          ((performance.now() - idleFrom.at) / 1000);
        warren.fleetUs = (perSecond * DURATION) / Math.max(1, warren.requests);
      }
      return { call, warren, ...(baseline ? { baseline } : {}) };
    };
    const rows: Row[] = [];
    // The smoke asks only that each call answers 200 under load, so it loads several at once.
    for (let i = 0; i < calls.length; i += BATCH) {
      for (const row of await Promise.all(calls.slice(i, i + BATCH).map(measure))) {
        printRow(row, bodies.get(row.call)!.length);
        rows.push(row);
      }
    }
    const short = rows.filter((row) => misses(row).length > 0).length;
    const failing = rows.filter((row) => row.warren.errors > 0 || !(row.warren.rps > 0)).length;
    // Rows whose one miss is a stall the raw server had too: said apart, still counted short.
    const sharedStalls = rows.filter((row) => misses(row).join() === 'stalls (raw too)').length;
    console.log(
      `${calls.length - short} of ${calls.length} calls meet every target` +
        `${raw ? `; ${sharedStalls} more miss only the stall rule, as the raw server does in the same row` : ''}` +
        `; load average ${loadAverage()}`,
    );
    if (failing > 0) return 1;
    return short > 0 && !flags.smoke ? 1 : 0;
  } finally {
    raw?.child.kill('SIGTERM');
    await Promise.all(fleet.map((agent) => agent.stop(false)));
    if (child) {
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

process.exit(await main());

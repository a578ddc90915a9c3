// Connection log benchmark: `npx tsx bench/connections.bench.ts [--rows N] [--ingest N] [--no-postgres]`.
//
// 1. Ingest into SQLite, in batches of 1,000 as devices send them: at the repository level
//    (one transaction per batch, cached multi-row INSERTs), through the whole service
//    (checks + destination lookup), and over HTTP — each next to baselines measured in the
//    same run (one INSERT per row; Kysely's query builder building the multi-row INSERT).
// 2. Paging at depth on SQLite and PostgreSQL: a page of 100 at the start of a log of
//    `--rows` entries (default 10,000,000, bulk-loaded with SQL, not through the API) and at
//    its end, over HTTP, next to the OFFSET query that keyset paging replaces.
//
// PostgreSQL: --postgres URL, else WARREN_BENCH_POSTGRES_URL / WARREN_TEST_POSTGRES_URL, else
// postgres://postgres@127.0.0.1:5432/test; skipped when unreachable. Each run uses its own schema.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { buildApp } from '../packages/server/src/app.js';
import type { AppContext } from '../packages/server/src/core/context.js';
import { newId } from '../packages/server/src/lib/ids.js';
import { LogIds } from '../packages/server/src/lib/log-ids.js';
import { generateSecret, hashSecret } from '../packages/server/src/lib/secrets.js';
import { systemClock } from '../packages/server/src/lib/time.js';
import type { NewConnectionRow } from '../packages/server/src/modules/logs/connections.repository.js';
import {
  appendConnections,
  connectionsPage,
  parseBatch,
  toRows,
} from '../packages/server/src/modules/logs/connections.service.js';
import { createNetwork } from '../packages/server/src/modules/tenants/tenants.service.js';
import { type Db, openStorage, type Storage } from '../packages/server/src/storage/database.js';

const { values: flags } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000000' },
    ingest: { type: 'string', default: '200000' },
    postgres: { type: 'string' },
    'no-postgres': { type: 'boolean', default: false },
  },
});
const DEPTH_ROWS = Number(flags.rows);
const INGEST_ROWS = Math.max(1000, Math.round(Number(flags.ingest) / 1000) * 1000);
const PG_URL =
  flags.postgres ??
  process.env.WARREN_BENCH_POSTGRES_URL ??
  process.env.WARREN_TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const BATCH = 1000;
const DEVICES = 50;

const dir = mkdtempSync(join(tmpdir(), 'warren-bench-'));
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const ms = (n: number) => `${n < 10 ? n.toFixed(2) : n.toFixed(1)} ms`;
const line = (label: string, value: string, note = '') =>
  console.log(`  ${label.padEnd(52)} ${value.padStart(16)}  ${note}`);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

async function timeMedian(runs: number, fn: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < 3; i++) await fn(); // warm-up: plans, caches, JIT
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  return median(times);
}

interface BenchDevice {
  id: string;
  token: string;
  ip: string;
}

/** Devices inserted directly, with node credentials, at address indexes 1..n. */
async function addDevices(db: Db, networkId: string, n: number): Promise<BenchDevice[]> {
  const devices: BenchDevice[] = [];
  for (let i = 1; i <= n; i++) {
    const token = generateSecret('node');
    const id = newId('device');
    await db
      .insertInto('devices')
      .values({
        id,
        network_id: networkId,
        name: `bench-${i}`,
        hostname: `bench-${i}`,
        os: 'linux',
        user_id: null,
        tags: '[]',
        node_key: `nodekey:${hashSecret(token)}`,
        addr_index: i,
        client_version: null,
        key_id: null,
        ephemeral: 0,
        created_at: Date.now(),
        last_seen_at: Date.now(),
        disconnected: 0,
        expires_at: null,
        node_token_hash: hashSecret(token),
        netmap_version: 1,
        netmap_hash: null,
      })
      .execute();
    devices.push({ id, token, ip: `100.64.0.${i}` }); // indexes below 255 sit at offset = index
  }
  await db
    .updateTable('networks')
    .set({ next_addr_index: n + 1 })
    .where('id', '=', networkId)
    .execute();
  return devices;
}

/** A batch as a device sends it: its own connections, mostly to peers, some to a subnet. */
function reportedBatch(from: BenchDevice, devices: BenchDevice[], seed: number) {
  const base = Date.UTC(2026, 10, 22, 10);
  return Array.from({ length: BATCH }, (_, i) => {
    const k = seed * BATCH + i;
    const to = devices[(k * 7) % devices.length] as BenchDevice;
    const start = base + k * 10;
    return {
      start: new Date(start).toISOString(),
      end: new Date(start + 4000).toISOString(),
      proto: k % 5 === 0 ? 'udp' : 'tcp',
      src: { addr: `${from.ip}:${40000 + (k % 20000)}` },
      dst: { addr: k % 10 === 0 ? `10.0.${k % 250}.${(k % 253) + 1}:5432` : `${to.ip}:443` },
      txBytes: k % 100_000,
      rxBytes: (k * 13) % 1_000_000,
      txPackets: k % 100,
      rxPackets: (k * 3) % 100,
    };
  });
}

async function freshSqlite(name: string): Promise<Storage> {
  return openStorage(`sqlite:${join(dir, `${name}.db`)}`);
}

/**
 * Posts pre-serialised batches from a worker thread, so the client does not share the
 * server's event loop. Each message carries one slice of jobs; the reply is its duration.
 */
const HTTP_CLIENT = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, clients } = workerData;
async function post(job) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: 'Bearer ' + job.token, 'content-type': 'application/json' },
    body: job.body,
  });
  const text = await response.text();
  if (response.status !== 202) throw new Error('HTTP ' + response.status + ': ' + text);
}
parentPort.on('message', (jobs) => {
  const began = performance.now();
  let next = 0;
  const client = async () => { for (let i = next++; i < jobs.length; i = next++) await post(jobs[i]); };
  Promise.all(Array.from({ length: clients }, client)).then(
    () => parentPort.postMessage({ ms: performance.now() - began }),
    (error) => parentPort.postMessage({ error: String(error) }),
  );
});
`;

const WARM_BATCHES = 10;
const ROUNDS = 3;

interface IngestDb {
  storage: Storage;
  networkId: string;
  devices: BenchDevice[];
}

async function ingestDb(name: string): Promise<IngestDb> {
  const storage = await freshSqlite(name);
  const { networkId } = await createNetwork(storage.db, {
    name,
    ownerEmail: 'bench@example.com',
    plan: 'premium',
    now: Date.now(),
  });
  return { storage, networkId, devices: await addDevices(storage.db, networkId, DEVICES) };
}

const reporterOf = (d: IngestDb, b: number) => ({
  networkId: d.networkId,
  deviceId: (d.devices[b % DEVICES] as BenchDevice).id,
});
const reportOf = (d: IngestDb, b: number) => reportedBatch(d.devices[b % DEVICES] as BenchDevice, d.devices, b);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** Rows as the service hands them to the repository (built outside the timed part). */
async function rowsOf(d: IngestDb, from: number, to: number): Promise<NewConnectionRow[][]> {
  const out: NewConnectionRow[][] = [];
  for (const b of range(from, to)) {
    const who = reporterOf(d, b);
    out.push(await toRows(d.storage.db, who, parseBatch(reportOf(d, b) as never, who.deviceId)));
  }
  return out;
}

/**
 * One way of ingesting: builds the inputs of batches [from, to) untimed, then stores them and
 * returns the milliseconds that took. Inputs exist only for the slice being run, so the
 * heap — and the garbage collector's work — stays the size a server would have.
 */
interface IngestVariant {
  name: string;
  label: string;
  db: IngestDb;
  run(from: number, to: number): Promise<number>;
  close?(): Promise<void>;
}

async function timed(work: () => Promise<void>): Promise<number> {
  const began = performance.now();
  await work();
  return performance.now() - began;
}

async function ingestVariants(): Promise<IngestVariant[]> {
  const perRow = await ingestDb('per-row');
  const builder = await ingestDb('builder');
  const repository = await ingestDb('repository');
  const service = await ingestDb('service');
  const http = await ingestDb('http');
  const app = await buildApp({ storage: http.storage, settings: { deviceRateLimit: 1_000_000 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/node/connections`;
  const worker = new Worker(HTTP_CLIENT, { eval: true, workerData: { url, clients: 4 } });
  return [
    {
      name: 'perRow',
      label: 'baseline: one INSERT per entry, one txn per batch',
      db: perRow,
      run: async (from, to) => {
        const batches = await rowsOf(perRow, from, to);
        return timed(async () => {
          for (const batch of batches) {
            await perRow.storage.db.transaction().execute(async (trx) => {
              for (const row of batch) await trx.insertInto('connections').values(row).execute();
            });
          }
        });
      },
    },
    {
      name: 'builder',
      label: 'baseline: Kysely builder, 500-row INSERTs',
      db: builder,
      run: async (from, to) => {
        const batches = await rowsOf(builder, from, to);
        return timed(async () => {
          for (const batch of batches) {
            await builder.storage.db.transaction().execute(async (trx) => {
              for (let i = 0; i < batch.length; i += 500) {
                await trx
                  .insertInto('connections')
                  .values(batch.slice(i, i + 500))
                  .execute();
              }
            });
          }
        });
      },
    },
    {
      name: 'repository',
      label: 'repository: appendConnections (cached INSERT text)',
      db: repository,
      run: async (from, to) => {
        const batches = await rowsOf(repository, from, to);
        return timed(async () => {
          for (const batch of batches)
            await appendConnections(repository.storage.db, repository.networkId, batch, Date.now());
        });
      },
    },
    {
      name: 'service',
      label: 'service: checks + destination lookup + append',
      db: service,
      run: async (from, to) => {
        const reports = range(from, to).map((b) => [b, reportOf(service, b)] as const);
        return timed(async () => {
          for (const [b, report] of reports) {
            const who = reporterOf(service, b);
            const rows = await toRows(service.storage.db, who, parseBatch(report as never, who.deviceId));
            await appendConnections(service.storage.db, service.networkId, rows, Date.now());
          }
        });
      },
    },
    {
      name: 'http',
      label: 'HTTP: POST /v1/node/connections, 4 clients',
      db: http,
      run: (from, to) => {
        const jobs = range(from, to).map((b) => ({
          token: (http.devices[b % DEVICES] as BenchDevice).token,
          body: JSON.stringify({ entries: reportOf(http, b) }),
        }));
        return new Promise((resolve, reject) => {
          worker.once('message', (reply: { ms?: number; error?: string }) =>
            reply.error ? reject(new Error(reply.error)) : resolve(reply.ms as number),
          );
          worker.once('error', reject);
          worker.postMessage(jobs);
        });
      },
      close: async () => {
        await worker.terminate();
        await app.close();
      },
    },
  ];
}

async function ingestBench(): Promise<void> {
  const batches = INGEST_ROWS / BATCH;
  const total = WARM_BATCHES + batches;
  console.log(
    `\nIngest into SQLite: ${fmt(INGEST_ROWS)} entries in batches of ${fmt(BATCH)} per variant, in ${ROUNDS} ` +
      `interleaved rounds (median shown) after ${WARM_BATCHES} warm-up batches`,
  );
  const variants = await ingestVariants();
  for (const variant of variants) await variant.run(0, WARM_BATCHES);
  const rates = new Map<string, number[]>();
  const edges = Array.from({ length: ROUNDS + 1 }, (_, r) => WARM_BATCHES + Math.round((batches * r) / ROUNDS));
  for (let r = 0; r < ROUNDS; r++) {
    for (const variant of variants) {
      const from = edges[r] as number;
      const to = edges[r + 1] as number;
      const ms = await variant.run(from, to);
      rates.set(variant.name, [...(rates.get(variant.name) ?? []), ((to - from) * BATCH) / (ms / 1000)]);
    }
  }
  for (const variant of variants) {
    await variant.close?.();
    const stored = await variant.db.storage.db
      .selectFrom('connections')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    await variant.db.storage.close();
    if (Number(stored.n) !== total * BATCH) throw new Error(`${variant.name}: stored ${stored.n} of ${total * BATCH}`);
  }
  const rate = (name: string) => median(rates.get(name) as number[]);
  const base = rate('perRow');
  for (const { name, label } of variants) {
    const all = (rates.get(name) as number[]).map((x) => fmt(x / 1000)).join(' / ');
    const ratio =
      name === 'http'
        ? `${(rate(name) / rate('repository')).toFixed(2)}× of repository`
        : `${(rate(name) / base).toFixed(2)}×`;
    line(label, `${fmt(rate(name))} /s`, `${ratio}   (rounds: ${all} k/s)`);
  }
  const target = 50_000;
  console.log(
    `  target ≥ ${fmt(target)} entries/s: repository ${rate('repository') >= target ? 'met' : 'MISSED'}, ` +
      `HTTP ${rate('http') >= target ? 'met' : 'MISSED'}`,
  );
}

/** 10M rows in one network: logged every 10 ms, 200 devices, written by SQL. */
function bulkSelect(dialect: 'sqlite' | 'postgres', networkId: string, base: number) {
  const cat = (...parts: string[]) => parts.join(' || ');
  const mod = (a: string, n: number) => `(${a} % ${n})`;
  const str = (e: string) => (dialect === 'postgres' ? `(${e})::text` : e);
  const x = 'x';
  return `select '${networkId}', ${base} + x * 10, ${base} + x * 10 - 5000, ${base} + x * 10 - 1000,
      case ${mod(x, 3)} when 0 then 'tcp' when 1 then 'udp' else 'icmp' end,
      ${cat("'dev_b'", str(mod(x, 200)))},
      ${cat("'100.64.0.'", str(`${mod(x, 200)} + 1`), "':'", str(`40000 + ${mod(x, 20000)}`))},
      ${cat("'dev_b'", str(mod(`${x} * 7`, 200)))},
      ${cat("'100.64.0.'", str(`${mod(`${x} * 7`, 200)} + 1`), "':443'")},
      ${mod(x, 100000)}, ${mod(`${x} * 13`, 1000000)}, ${mod(x, 100)}, ${mod(`${x} * 3`, 100)},
      ${cat("'dev_b'", str(mod(x, 200)))}`;
}

const COLUMNS =
  'network_id, logged_at, start_at, end_at, proto, src_device_id, src_addr, dst_device_id, dst_addr, tx_bytes, rx_bytes, tx_packets, rx_packets, reported_by';
const INDEXES = [
  ['connections_network_seq', 'network_id, seq'],
  ['connections_network_logged', 'network_id, logged_at, seq'],
  ['connections_src_seq', 'network_id, src_device_id, seq'],
  ['connections_dst_seq', 'network_id, dst_device_id, seq'],
] as const;

/** Loads the rows with the indexes dropped and builds them afterwards (the same indexes). */
async function bulkLoad(db: Kysely<any>, dialect: 'sqlite' | 'postgres', networkId: string, rows: number) {
  const base = Date.now() - rows * 10;
  // One connection throughout, so the session settings apply to every statement.
  await db.connection().execute(async (c) => {
    const run = (text: string) => sql.raw(text).execute(c);
    for (const [name] of INDEXES) await run(`drop index ${name}`);
    if (dialect === 'sqlite') {
      await run('pragma journal_mode = delete');
      await run('pragma synchronous = off');
      await run('pragma cache_size = -1000000');
      await run(
        `insert into connections (${COLUMNS}) with recursive c(x) as (select 1 union all select x + 1 from c where x < ${rows}) ${bulkSelect(dialect, networkId, base)} from c`,
      );
    } else {
      await run("set maintenance_work_mem = '512MB'");
      // Explicit sequence numbers spare ten million nextval() calls; the sequence is moved after.
      await run(
        `insert into connections (seq, ${COLUMNS}) select x, ${bulkSelect(dialect, networkId, base).replace(/^select /, '')} from generate_series(1, ${rows}) x`,
      );
      await run(`select setval(pg_get_serial_sequence('connections', 'seq'), ${rows})`);
    }
    for (const [name, columns] of INDEXES) await run(`create index ${name} on connections (${columns})`);
    if (dialect === 'sqlite') {
      await run('pragma journal_mode = wal');
      await run('pragma synchronous = normal');
      await run('pragma cache_size = -2000');
      await run('analyze');
    } else {
      await run('analyze connections');
    }
  });
}

async function depthBench(dialect: 'sqlite' | 'postgres', storage: Storage, drop: () => Promise<void>) {
  console.log(
    `\nPaging on ${dialect === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: a page of 100 in a log of ${fmt(DEPTH_ROWS)} entries`,
  );
  const { networkId, apiKey } = await createNetwork(storage.db, {
    name: 'depth',
    ownerEmail: 'bench@example.com',
    plan: 'premium',
    now: Date.now(),
  });
  const t = performance.now();
  await bulkLoad(storage.db, dialect, networkId, DEPTH_ROWS);
  line('bulk load (SQL, indexes built after)', `${fmt((performance.now() - t) / 1000, 1)} s`);
  const { rows: bounds } = await sql<{
    lo: number;
    hi: number;
  }>`select min(seq) as lo, max(seq) as hi from connections`.execute(storage.db);
  const lo = Number(bounds[0]?.lo);
  const hi = Number(bounds[0]?.hi);

  const logIds = await LogIds.load(storage.db);
  const encodeCursor = (seq: number) => logIds.cursor('connection', seq);
  const app = await buildApp({ storage, settings: { apiRateLimit: 1_000_000 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/v1/logs/connections`;
  const get = async (query: string) => {
    const response = await fetch(`${base}?${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
    const body = (await response.json()) as { entries: unknown[] };
    if (response.status !== 200 || body.entries.length !== 100) {
      throw new Error(`GET ?${query}: ${response.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
  };
  const runs = 40;
  const start = await timeMedian(runs, () => get(`cursor=${encodeCursor(lo - 1)}&limit=100`));
  const deep = await timeMedian(runs, () => get(`cursor=${encodeCursor(hi - 200)}&limit=100`));
  line('page at the start (cursor), HTTP', ms(start), '1.00×');
  line(`page at depth ${fmt(hi - 200 - lo + 1)} (cursor), HTTP`, ms(deep), `${(deep / start).toFixed(2)}× of start`);
  const devStart = await timeMedian(runs, () => get(`cursor=${encodeCursor(lo - 1)}&limit=100&device=dev_b7`));
  const devDeep = await timeMedian(runs, () => get(`cursor=${encodeCursor(hi - 200_000)}&limit=100&device=dev_b7`));
  line('device filter, page at the start, HTTP', ms(devStart), `${(devStart / start).toFixed(2)}× of start`);
  line('device filter, page near the end, HTTP', ms(devDeep), `${(devDeep / start).toFixed(2)}× of start`);
  const since = await timeMedian(runs, () => get('since=1h&limit=100'));
  line('since=1h (resolved to a position), HTTP', ms(since), `${(since / start).toFixed(2)}× of start`);
  await app.close();

  const offsetQuery = (offset: number) =>
    storage.db
      .selectFrom('connections')
      .selectAll()
      .where('network_id', '=', networkId)
      .orderBy('seq')
      .limit(100)
      .offset(offset)
      .execute();
  const keysetQuery = (after: number) =>
    storage.db
      .selectFrom('connections')
      .selectAll()
      .where('network_id', '=', networkId)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(100)
      .execute();
  // The same pages without HTTP, key lookup and rate limiting: what the log itself costs.
  const ctx = { db: storage.db, clock: systemClock, logIds } as AppContext;
  const servicePage = (query: Record<string, string | number>) => connectionsPage(ctx, networkId, query);
  const svcStart = await timeMedian(runs, () => servicePage({ cursor: encodeCursor(lo - 1), limit: 100 }));
  const svcDeep = await timeMedian(runs, () => servicePage({ cursor: encodeCursor(hi - 200), limit: 100 }));
  const svcDevDeep = await timeMedian(runs, () =>
    servicePage({ cursor: encodeCursor(hi - 200_000), limit: 100, device: 'dev_b7' }),
  );
  const svcSince = await timeMedian(runs, () => servicePage({ since: '1h', limit: 100 }));
  line('service: page at the start (cursor)', ms(svcStart), '1.00×');
  line(
    `service: page at depth ${fmt(hi - 200 - lo + 1)} (cursor)`,
    ms(svcDeep),
    `${(svcDeep / svcStart).toFixed(2)}× of start`,
  );
  line('service: device filter, page near the end', ms(svcDevDeep), `${(svcDevDeep / svcStart).toFixed(2)}× of start`);
  line('service: since=1h', ms(svcSince), `${(svcSince / svcStart).toFixed(2)}× of start`);
  const keysetDeep = await timeMedian(runs, () => keysetQuery(hi - 200));
  const offsetDeep = await timeMedian(3, () => offsetQuery(hi - lo - 199));
  line('SQL only: keyset page at depth', ms(keysetDeep));
  line(
    'SQL only: OFFSET page at depth (what keyset avoids)',
    ms(offsetDeep),
    `${fmt(offsetDeep / keysetDeep)}× of keyset`,
  );
  await drop();
}

async function postgresStorage(): Promise<{ storage: Storage; drop: () => Promise<void> } | undefined> {
  const probe = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 2000 });
  try {
    await probe.connect();
    await probe.end();
  } catch (error) {
    console.log(`\nPostgreSQL at ${PG_URL} is not reachable (${(error as Error).message}); skipped.`);
    return undefined;
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const storage = await openStorage(PG_URL, { schema, poolSize: 4 });
  return {
    storage,
    drop: async () => {
      await storage.close();
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  };
}

async function main() {
  const began = performance.now();
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');
  console.log(
    `Connection log benchmark (Node ${process.version}, ${cpus().length} CPUs, load average ${load}, ${new Date().toISOString()})`,
  );
  await ingestBench();
  const sqlite = await freshSqlite('depth');
  await depthBench('sqlite', sqlite, () => sqlite.close());
  if (!flags['no-postgres']) {
    const pgStorage = await postgresStorage();
    if (pgStorage) await depthBench('postgres', pgStorage.storage, pgStorage.drop);
  }
  console.log(`\ndone in ${fmt((performance.now() - began) / 1000, 1)} s`);
}

try {
  await main();
} finally {
  rmSync(dir, { recursive: true, force: true });
}

// The audit batch's write on its own: `npx tsx --conditions=@warren/source bench/audit-flush-probe.ts
// [--rows 200000] [--rate 10000] [--rounds 3] BOUND…`. For each bound in turn (alternated over
// --rounds), a fresh SQLite file with Warren's schema takes --rows audit entries through the
// server's batch writer (http/audit.ts, its bound replaced by BOUND), handed in as requests would at
// --rate a second: each millisecond's entries queued at once, so the 50 ms timer and the bound
// decide the batches as they do in the server. Prints the process's CPU time per entry, the
// batches, and each batch's hold of the event loop (the write from its start to its commit).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { AuditRow } from '../packages/server/src/core/audit-entries.js';
import { AuditLog } from '../packages/server/src/http/audit.js';
import { openStorage } from '../packages/server/src/storage/database.js';

const { values, positionals } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    rate: { type: 'string', default: '10000' },
    rounds: { type: 'string', default: '3' },
  },
  allowPositionals: true,
});
const ROWS = Number(values.rows);
const PER_MS = Number(values.rate) / 1000;
const bounds = positionals.map(Number);

function row(i: number, now: number): AuditRow {
  return {
    network_id: 'net_bench00000000000',
    time: now,
    key_id: 'key_bench00000000000',
    key_name: 'bench',
    device_id: null,
    user_id: null,
    user_login: null,
    method: 'GET',
    path: '/v1/users',
    status: 200,
    client_addr: '127.0.0.1',
    request_id: `req-${i.toString(36).padStart(8, '0')}`,
    action: null,
    target: null,
  };
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;

async function measure(bound: number) {
  const dir = mkdtempSync(join(tmpdir(), 'audit-flush-'));
  const storage = await openStorage(`sqlite:${join(dir, 'w.db')}`);
  const audit = new AuditLog(storage.db, { batch: bound });
  const holds: number[] = [];
  // Each batch's write, timed from its start to its commit: on SQLite it runs without yielding
  // to the event loop (microtasks only), so this is how long it holds the loop.
  const write = (audit as unknown as { write: (...args: unknown[]) => Promise<void> }).write.bind(audit);
  (audit as unknown as { write: (...args: unknown[]) => Promise<void> }).write = async (...args) => {
    const started = performance.now();
    await write(...args);
    holds.push(performance.now() - started);
  };
  const cpu = process.cpuUsage();
  let i = 0;
  while (i < ROWS) {
    const now = Date.now();
    for (let n = 0; n < PER_MS && i < ROWS; n++) audit.enqueue(row(i++, now));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  await audit.close();
  const used = process.cpuUsage(cpu);
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
  holds.sort((a, b) => a - b);
  return {
    bound,
    userUsPerRow: +(used.user / ROWS).toFixed(2),
    cpuUsPerRow: +((used.user + used.system) / ROWS).toFixed(2),
    batches: holds.length,
    holdMs: {
      p50: +quantile(holds, 0.5).toFixed(2),
      p99: +quantile(holds, 0.99).toFixed(2),
      max: +(holds.at(-1) ?? 0).toFixed(2),
    },
  };
}

for (let round = 0; round < Number(values.rounds); round++) {
  const order = round % 2 === 0 ? bounds : [...bounds].reverse();
  for (const bound of order) console.log(JSON.stringify(await measure(bound)));
}

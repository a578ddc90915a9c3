// Preloaded into `warren serve` (`node --import`) to find what holds its event loop:
//
//   WARREN_STALL_LOG=/tmp/stalls.jsonl WARREN_BENCH_NODE_ARGS="--import bench/stall-probe.mjs" \
//     npm run bench -- reads --only /v1/network
//
// Writes one JSON line a second to WARREN_STALL_LOG: the event loop's delay (p50, p99, max in
// ms, perf_hooks.monitorEventLoopDelay), the garbage collector's pauses by kind (1 scavenge,
// 2 mark-compact, 4 incremental marking, 8 weak callbacks: count, total and longest ms), every
// SQLite statement that took over 1 ms (better-sqlite3's run/all/get, with its SQL), and every
// timer callback that held the loop over 1 ms (with where it was set). A second with a high
// delay and nothing of the server's over 1 ms is the machine not running the process.
// Only the main thread reports (worker threads run preloads too).
// Each line also counts the HTTP requests that second started (a line of the window a call
// loads Warren from one the raw server is loaded, by its count), the scavenges by pause
// (`scavengeMs`: how many took under 0.5, 1, 2, 3, 5, 7 ms and longer; `scavenges`: each
// one's pause) and every audit batch's
// hold of the loop, from its `begin` to the end of its `commit` (`auditHolds`: the same buckets,
// and each hold with its rows, insert and commit times), whatever they took.
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const out = process.env.WARREN_STALL_LOG;
const SLOW_MS = 1;
const ms = (ns) => Number((ns / 1e6).toFixed(2));
/** Upper bounds (ms) of the pause buckets; the last bucket is everything longer. */
const BUCKETS = [0.5, 1, 2, 3, 5, 7];
const bucketed = () => new Array(BUCKETS.length + 1).fill(0);
const bucketOf = (took) => {
  const index = BUCKETS.findIndex((bound) => took < bound);
  return index === -1 ? BUCKETS.length : index;
};
/** The audit table's insert has 14 values a row (core/audit-entries.ts). */
const AUDIT_COLUMNS = 14;

if (out && isMainThread) {
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  let gc = {};
  let statements = [];
  let timers = [];
  let requests = 0;
  let scavengeMs = bucketed();
  let scavenges = [];
  let auditHolds = { buckets: bucketed(), holds: [] };
  subscribe('http.server.request.start', () => requests++);
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const key = entry.detail?.kind ?? 0;
      gc[key] ??= { count: 0, totalMs: 0, maxMs: 0 };
      const kind = gc[key];
      kind.count++;
      kind.totalMs += entry.duration;
      kind.maxMs = Math.max(kind.maxMs, entry.duration);
      if (key === 1) {
        scavengeMs[bucketOf(entry.duration)]++;
        scavenges.push(+entry.duration.toFixed(2));
      }
    }
  }).observe({ entryTypes: ['gc'] });

  // The statement class is not exported: take its prototype from a statement of a scratch database.
  const require = createRequire(join(import.meta.dirname, '..', 'packages', 'server', 'package.json'));
  const Database = require('better-sqlite3');
  const scratch = new Database(':memory:');
  const statementPrototype = Object.getPrototypeOf(scratch.prepare('select 1'));
  scratch.close();
  // The transaction in progress on the connection: when it began, and its audit rows so far.
  let transaction;
  const noteTransaction = (source, args, started, took) => {
    if (source === 'begin') transaction = { began: started, rows: 0, insertMs: 0 };
    else if (!transaction) return;
    else if (source.startsWith('insert into audit_log')) {
      transaction.rows += (Array.isArray(args[0]) ? args[0].length : args.length) / AUDIT_COLUMNS;
      transaction.insertMs += took;
    } else if (source === 'commit' || source === 'rollback') {
      if (transaction.rows > 0) {
        const held = started + took - transaction.began;
        auditHolds.buckets[bucketOf(held)]++;
        auditHolds.holds.push([+held.toFixed(2), transaction.rows, +transaction.insertMs.toFixed(2), +took.toFixed(2)]);
      }
      transaction = undefined;
    }
  };
  for (const method of ['run', 'all', 'get']) {
    const original = statementPrototype[method];
    statementPrototype[method] = function (...args) {
      const started = performance.now();
      try {
        return original.apply(this, args);
      } finally {
        const took = performance.now() - started;
        noteTransaction(this.source, args, started, took);
        if (took > SLOW_MS) statements.push(`${took.toFixed(1)} ms ${this.source.replace(/\s+/g, ' ').slice(0, 80)}`);
      }
    };
  }

  const timed =
    (set, label) =>
    (callback, delayMs, ...rest) => {
      if (typeof callback !== 'function') return set(callback, delayMs, ...rest);
      const where = new Error().stack?.split('\n')[2]?.trim() ?? '';
      return set(
        function (...args) {
          const started = performance.now();
          try {
            return callback.apply(this, args);
          } finally {
            const took = performance.now() - started;
            if (took > SLOW_MS) timers.push(`${took.toFixed(1)} ms ${label} ${where}`);
          }
        },
        delayMs,
        ...rest,
      );
    };
  const setInterval_ = globalThis.setInterval;
  globalThis.setTimeout = timed(globalThis.setTimeout, 'timeout');
  globalThis.setInterval = timed(setInterval_, 'interval');

  setInterval_(() => {
    const line = {
      time: new Date().toISOString().slice(11, 19),
      requests,
      delayMs: { p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max) },
      gc: Object.fromEntries(
        Object.entries(gc).map(([kind, g]) => [
          kind,
          { ...g, totalMs: +g.totalMs.toFixed(1), maxMs: +g.maxMs.toFixed(1) },
        ]),
      ),
      slowStatements: statements.length,
      statements: statements.slice(0, 10),
      slowTimers: timers.length,
      timers: timers.slice(0, 10),
      scavengeMs,
      scavenges,
      auditHolds,
    };
    appendFileSync(out, `${JSON.stringify(line)}\n`);
    delay.reset();
    gc = {};
    statements = [];
    timers = [];
    requests = 0;
    scavengeMs = bucketed();
    scavenges = [];
    auditHolds = { buckets: bucketed(), holds: [] };
  }, 1000).unref();
}

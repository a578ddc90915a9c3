// Sums up a stall probe's log (bench/stall-probe.mjs) over the seconds a call loaded the server:
//
//   node bench/stall-summary.mjs /tmp/stalls.jsonl [--min-requests 1000]
//
// A second counts as loaded when it started at least --min-requests requests (the reads
// benchmark loads Warren and the raw server in turn: in the raw server's seconds Warren answers
// nothing but the fleet). Prints, over those seconds: requests a second, scavenges a second and
// per 1,000 requests, their pause time per request, the scavenges by pause (and the pauses' p50,
// p99 and their time per request without those of 7 ms or more, which are mostly the process
// descheduled in the middle of one, where the log has each pause), other collections,
// the event loop delay's p99 (the median and the worst of the seconds'), and the audit batches'
// holds of the loop from `begin` to the end of `commit` (how many, rows per batch, p50, p99, max,
// by bucket, and the insert's and commit's share).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  options: { 'min-requests': { type: 'string', default: '1000' } },
  allowPositionals: true,
});
const minRequests = Number(values['min-requests']);
const BUCKETS = ['<0.5', '0.5-1', '1-2', '2-3', '3-5', '5-7', '>=7'];

const lines = readFileSync(positionals[0], 'utf8')
  .split('\n')
  .filter((line) => line !== '')
  .map((line) => JSON.parse(line))
  .filter((line) => line.requests >= minRequests);

const quantile = (sorted, q) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
const add = (into, from) => {
  for (const [i, n] of from.entries()) into[i] += n;
};
const fixed = (n, digits = 2) => Number(n.toFixed(digits));

const seconds = lines.length;
const requests = lines.reduce((sum, line) => sum + line.requests, 0);
const scavenges = lines.reduce((sum, line) => sum + (line.gc[1]?.count ?? 0), 0);
const scavengeMs = lines.reduce((sum, line) => sum + (line.gc[1]?.totalMs ?? 0), 0);
const scavengeBuckets = new Array(BUCKETS.length).fill(0);
const auditBuckets = new Array(BUCKETS.length).fill(0);
const holds = [];
const others = {};
for (const line of lines) {
  add(scavengeBuckets, line.scavengeMs);
  add(auditBuckets, line.auditHolds.buckets);
  holds.push(...line.auditHolds.holds);
  for (const [kind, g] of Object.entries(line.gc)) {
    if (kind === '1') continue;
    others[kind] ??= { count: 0, totalMs: 0, maxMs: 0 };
    others[kind].count += g.count;
    others[kind].totalMs = fixed(others[kind].totalMs + g.totalMs, 1);
    others[kind].maxMs = Math.max(others[kind].maxMs, g.maxMs);
  }
}
const pauses = lines.flatMap((line) => line.scavenges ?? []).sort((a, b) => a - b);
const delays = lines.map((line) => line.delayMs.p99).sort((a, b) => a - b);
const held = holds.map(([ms]) => ms).sort((a, b) => a - b);
const sum = (values) => values.reduce((a, b) => a + b, 0);

console.log(
  JSON.stringify(
    {
      seconds,
      requestsPerSecond: Math.round(requests / seconds),
      scavengesPerSecond: fixed(scavenges / seconds, 1),
      scavengesPer1000Requests: fixed((scavenges / requests) * 1000),
      scavengeUsPerRequest: fixed((scavengeMs / requests) * 1000),
      scavengeMaxMs: Math.max(0, ...lines.map((line) => line.gc[1]?.maxMs ?? 0)),
      scavengePauseMs: pauses.length
        ? {
            p50: quantile(pauses, 0.5),
            p99: quantile(pauses, 0.99),
            usPerRequestUnder7Ms: fixed((sum(pauses.filter((ms) => ms < 7)) / requests) * 1000),
          }
        : undefined,
      scavengesByPauseMs: Object.fromEntries(BUCKETS.map((label, i) => [label, scavengeBuckets[i]])),
      otherCollections: others,
      loopDelayP99Ms: { median: quantile(delays, 0.5), max: delays.at(-1) ?? 0 },
      auditBatches: {
        count: holds.length,
        perSecond: fixed(holds.length / seconds, 1),
        rowsPerBatch: fixed(sum(holds.map(([, rows]) => rows)) / (holds.length || 1), 0),
        holdMs: { p50: quantile(held, 0.5), p99: quantile(held, 0.99), max: held.at(-1) ?? 0 },
        holdUsPerRequest: fixed((sum(held) / requests) * 1000),
        insertMsMean: fixed(sum(holds.map(([, , insert]) => insert)) / (holds.length || 1)),
        commitMsMean: fixed(sum(holds.map(([, , , commit]) => commit)) / (holds.length || 1)),
        byHoldMs: Object.fromEntries(BUCKETS.map((label, i) => [label, auditBuckets[i]])),
      },
    },
    null,
    1,
  ),
);

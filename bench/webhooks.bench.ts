// Webhooks benchmark: `npx tsx bench/webhooks.bench.ts [--events N] [--endpoints N] [--keys N] [--rounds R]`.
//
// 1. Fan-out: N events (default 10,000, made by creating users through the service, each its
//    own transaction) delivered to E endpoints (default 20) of a receiver on loopback, through
//    a real server on a SQLite file. Figures: deliveries per second from the first commit to the
//    last delivery, and the p50/p99 lag from an event's commit to its arrival. Baseline in the
//    same run: a bare loop per endpoint that POSTs the same payloads to the same receiver,
//    one at a time, with no database.
// 2. The API while webhooks deliver: POST /v1/keys throughput over HTTP (8 at a time) with no
//    webhook, then with E endpoints subscribed to every event (so each key.created makes E
//    deliveries during the measurement), in R rounds (default 5); between rounds the backlog is
//    delivered and the endpoints deleted. Each round's ratio compares two phases a few seconds
//    apart, so load from elsewhere on a shared machine skews one round, not the figure: the
//    median ratio must stay at or above 0.90 (the benchmark fails otherwise). Also printed: the
//    same ratio by the main thread's CPU time per key (Linux), which other processes hardly
//    move; the deliveries made while the API was saturated; how long the backlog took after.

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { buildApp } from '../packages/server/src/app.js';
import { systemActor } from '../packages/server/src/core/actor.js';
import { systemClock } from '../packages/server/src/lib/time.js';
import { createNetwork } from '../packages/server/src/modules/tenants/tenants.service.js';
import { createUser } from '../packages/server/src/modules/users/users.service.js';
import { signedHeaders } from '../packages/server/src/modules/webhooks/signing.js';
import { openStorage } from '../packages/server/src/storage/database.js';

const { values: flags } = parseArgs({
  options: {
    events: { type: 'string', default: '10000' },
    endpoints: { type: 'string', default: '20' },
    keys: { type: 'string', default: '1000' },
    rounds: { type: 'string', default: '5' },
    crash: { type: 'boolean', default: false },
  },
});
const EVENTS = Number(flags.events);
const ENDPOINTS = Number(flags.endpoints);
const KEYS = Number(flags.keys);
const ROUNDS = Number(flags.rounds);

/**
 * A receiver that answers 204 and records each arrival's lag behind the event's commit. It
 * runs in a worker thread, as it would run on another machine: its parsing must not take the
 * server's event loop.
 */
const RECEIVER = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
let count = 0, last = 0, lags = [];
const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (c) => chunks.push(c));
  request.on('end', () => {
    const now = Date.now();
    count++; last = now;
    if (request.url !== '/bare') lags.push(now - Date.parse(JSON.parse(Buffer.concat(chunks).toString('utf8')).timestamp));
    response.writeHead(204).end();
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', (m) => {
  if (m === 'stats') parentPort.postMessage({ count, last, lags });
  if (m === 'reset') { count = 0; lags = []; parentPort.postMessage({ reset: true }); }
});
`;

async function receiver() {
  const worker = new Worker(RECEIVER, { eval: true });
  const ask = (message: string) =>
    new Promise<{ port?: number; count: number; last: number; lags: number[] }>((resolve) => {
      worker.once('message', resolve);
      if (message) worker.postMessage(message);
    });
  const { port } = await ask('');
  const stats = () => ask('stats');
  return {
    url: `http://127.0.0.1:${port}`,
    stats,
    reset: () => ask('reset'),
    close: () => worker.terminate(),
  };
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function server() {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-webhooks-'));
  const storage = await openStorage(`sqlite:${join(dir, 'warren.db')}`);
  const network = await createNetwork(storage.db, {
    name: 'bench',
    ownerEmail: 'o@example.com',
    plan: 'premium',
    now: Date.now(),
  });
  const app = await buildApp({
    storage,
    clock: systemClock,
    settings: { apiRateLimit: 10_000_000, webhooksAllowPrivate: true, eventDetectorIntervalMs: 3_600_000 },
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${network.apiKey}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    app,
    network,
    call,
    close: async () => {
      await app.close();
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function subscribe(s: Awaited<ReturnType<typeof server>>, url: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await s.call('POST', '/v1/webhooks', { url: `${url}/h${i}`, events: ['*'] });
    if (res.status !== 201) throw new Error(`webhook: ${res.status} ${await res.text()}`);
    ids.push(((await res.json()) as { id: string }).id);
  }
  return ids;
}

async function fanOut(): Promise<void> {
  const s = await server();
  const r = await receiver();
  await subscribe(s, r.url, ENDPOINTS);
  const actor = systemActor(s.network.networkId, 'bench');
  const started = Date.now();
  for (let i = 0; i < EVENTS; i++) await createUser(s.app.ctx, actor, { loginName: `u${i}@example.com` });
  const committed = Date.now();
  const total = EVENTS * ENDPOINTS;
  await until(async () => (await r.stats()).count >= total, 900_000);
  const { last, lags } = await r.stats();
  const seconds = (last - started) / 1000;
  const rate = total / seconds;
  console.log(`fan-out: ${EVENTS} events × ${ENDPOINTS} endpoints = ${total} deliveries`);
  console.log(
    `  events committed in ${((committed - started) / 1000).toFixed(1)} s; last delivery ${seconds.toFixed(1)} s after the first commit`,
  );
  console.log(
    `  ${Math.round(rate)} deliveries/s; lag commit → arrival p50 ${percentile(lags, 50)} ms, p99 ${percentile(lags, 99)} ms`,
  );

  // Baseline: the same payloads, signed, POSTed by a bare loop per endpoint.
  const body = JSON.stringify({
    type: 'user.created',
    timestamp: new Date().toISOString(),
    data: { id: 'evt_x', data: {} },
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: ENDPOINTS });
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const request = http.request(
        `${r.url}/bare`,
        {
          method: 'POST',
          agent,
          headers: signedHeaders(['whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='], 'evt_x', 1, body),
        },
        (response) => {
          response.resume();
          response.on('end', () => resolve());
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  await r.reset();
  const bareStart = Date.now();
  await Promise.all(
    Array.from({ length: ENDPOINTS }, async () => {
      for (let i = 0; i < EVENTS; i++) await post();
    }),
  );
  const bareRate = total / ((Date.now() - bareStart) / 1000);
  agent.destroy();
  console.log(`  bare loop: ${Math.round(bareRate)} posts/s; ratio ${(rate / bareRate).toFixed(2)}`);
  await s.close();
  await r.close();
}

/**
 * CPU time of the main thread (server, dispatcher and this benchmark's client; not the
 * receiver's thread), in clock ticks, from Linux's /proc. Unlike throughput it hardly moves
 * with what other processes on a shared machine do, so it says what delivery itself costs.
 */
function mainThreadTicks(): number {
  const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime, stime
}

async function keysPhase(s: Awaited<ReturnType<typeof server>>): Promise<{ rate: number; cpu: number }> {
  let next = 0;
  const started = Date.now();
  const ticks = mainThreadTicks();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next++ < KEYS) {
        const res = await s.call('POST', '/v1/keys', { type: 'auth', expiresIn: '1h' });
        if (res.status !== 201) throw new Error(`POST /v1/keys: ${res.status}`);
        await res.arrayBuffer();
      }
    }),
  );
  return { rate: KEYS / ((Date.now() - started) / 1000), cpu: (mainThreadTicks() - ticks) / KEYS };
}

const median = (values: number[]) => percentile(values, 50);

interface Round {
  without: { rate: number; cpu: number };
  with: { rate: number; cpu: number };
  during: number;
  drain: number;
}

async function apiWhileDelivering(): Promise<boolean> {
  const s = await server();
  const r = await receiver();
  await keysPhase(s); // warm-up
  const rounds: Round[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const without = await keysPhase(s);
    const ids = await subscribe(s, r.url, ENDPOINTS);
    const before = (await r.stats()).count;
    const withHooks = await keysPhase(s);
    const measured = Date.now();
    const during = (await r.stats()).count - before;
    await until(async () => (await r.stats()).count >= before + KEYS * ENDPOINTS, 300_000);
    const drain = (Date.now() - measured) / 1000;
    for (const id of ids) await s.call('DELETE', `/v1/webhooks/${id}`);
    rounds.push({ without, with: withHooks, during, drain });
  }
  console.log(`POST /v1/keys, 8 at a time, ${KEYS} keys per phase, ${ROUNDS} rounds:`);
  for (const [i, round] of rounds.entries()) {
    console.log(
      `  round ${i + 1}: no webhooks ${Math.round(round.without.rate)}/s; ${ENDPOINTS} webhooks subscribed ${Math.round(round.with.rate)}/s; ` +
        `ratio ${(round.with.rate / round.without.rate).toFixed(2)} (main-thread CPU per key: ${(round.without.cpu / round.with.cpu).toFixed(2)}); ` +
        `${round.during} of ${KEYS * ENDPOINTS} deliveries made meanwhile, the rest ${round.drain.toFixed(1)} s later`,
    );
  }
  const ratio = median(rounds.map((round) => round.with.rate / round.without.rate));
  const cpuRatio = median(rounds.map((round) => round.without.cpu / round.with.cpu));
  console.log(`  median ratio ${ratio.toFixed(2)} (must be ≥ 0.90); by main-thread CPU per key ${cpuRatio.toFixed(2)}`);
  await s.close();
  await r.close();
  return ratio >= 0.9;
}

await fanOut();
const apiHeld = await apiWhileDelivering();
if (process.argv.includes('--crash')) await import('./webhooks-crash.js');
if (!apiHeld) process.exit(1);

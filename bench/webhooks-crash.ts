// Crash test of webhook delivery: `npx tsx bench/webhooks-crash.ts [--users N] [--endpoints N] [--kills N]`
// (also `npm run bench -- webhooks --crash`).
//
// A real `warren serve` on a SQLite file delivers N events (users created over HTTP) to E
// endpoints of a receiver in a worker thread; while it fans out, the server is killed with
// SIGKILL and started again, K times. Every (event, endpoint) pair must arrive at least once.
// Each kill costs up to the 30 s lease the dead process held on its endpoints.

import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';

const { values: flags } = parseArgs({
  options: {
    users: { type: 'string', default: '2000' },
    endpoints: { type: 'string', default: '5' },
    kills: { type: 'string', default: '5' },
  },
  strict: false,
});
const USERS = Number(flags.users);
const ENDPOINTS = Number(flags.endpoints);
const KILLS = Number(flags.kills);
const CLI = join(import.meta.dirname, '..', 'packages', 'cli', 'bin', 'warren.js');

const RECEIVER = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
const seen = new Set(); let count = 0;
const server = http.createServer((request, response) => {
  request.resume();
  request.on('end', () => { count++; seen.add(request.url + ' ' + request.headers['webhook-id']); response.writeHead(204).end(); });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
parentPort.on('message', () => parentPort.postMessage({ count, distinct: seen.size }));
`;

const freePort = () =>
  new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const dir = mkdtempSync(join(tmpdir(), 'warren-crash-'));
const db = `sqlite:${join(dir, 'warren.db')}`;
const { apiKey } = JSON.parse(execFileSync('node', [CLI, 'init', '--db', db, '--json'], { encoding: 'utf8' })) as {
  apiKey: string;
};
const port = await freePort();
const base = `http://127.0.0.1:${port}`;

async function start(): Promise<ChildProcess> {
  const child = spawn('node', [CLI, 'serve', '--db', db, '--port', String(port), '--webhooks-allow-private'], {
    stdio: ['ignore', 'ignore', process.env.WARREN_CRASH_LOG ? 'inherit' : 'ignore'],
  });
  for (;;) {
    try {
      if ((await fetch(`${base}/readyz`)).ok) return child;
    } catch {}
    await sleep(50);
  }
}
const call = (method: string, path: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const worker = new Worker(RECEIVER, { eval: true });
const receiverPort = await new Promise<number>((resolve) =>
  worker.once('message', (m: { port: number }) => resolve(m.port)),
);
const stats = () =>
  new Promise<{ count: number; distinct: number }>((resolve) => {
    worker.once('message', resolve);
    worker.postMessage('stats');
  });

let server = await start();
// The key of `warren init` allows 100 requests a minute; the operator raises it.
const keys = (await (await call('GET', '/v1/keys?type=api')).json()) as { keys: { id: string }[] };
execFileSync('node', [CLI, 'keys', 'set-limit', keys.keys[0]!.id, '1000000', '--db', db]);
for (let i = 0; i < ENDPOINTS; i++) {
  await call('POST', '/v1/webhooks', { url: `http://127.0.0.1:${receiverPort}/e${i}`, events: ['user.created'] });
}
let next = 0;
await Promise.all(
  Array.from({ length: 8 }, async () => {
    while (next < USERS) {
      const res = await call('POST', '/v1/users', { loginName: `u${next++}@example.com` });
      if (res.status !== 201) throw new Error(`POST /v1/users: ${res.status}`);
    }
  }),
);
const expected = USERS * ENDPOINTS;
const started = Date.now();
for (let k = 0; k < KILLS; k++) {
  await sleep(300 + Math.random() * 700);
  server.kill('SIGKILL');
  await new Promise((resolve) => server.once('exit', resolve));
  const { distinct } = await stats();
  console.log(`  kill ${k + 1}: ${distinct}/${expected} delivered so far`);
  server = await start();
}
while ((await stats()).distinct < expected) {
  if (Date.now() - started > Number(process.env.WARREN_CRASH_WAIT_MS ?? 600_000)) break;
  await sleep(200);
}
const { count, distinct } = await stats();
console.log(
  `crash test: ${KILLS} × SIGKILL during fan-out of ${USERS} events to ${ENDPOINTS} endpoints: ` +
    `${distinct}/${expected} delivered at least once (${count - distinct} again after a crash) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
);
server.kill('SIGKILL');
await worker.terminate();
if (process.env.WARREN_CRASH_LOG) console.log(`database kept at ${db}`);
else rmSync(dir, { recursive: true, force: true });
if (distinct < expected) process.exit(1);

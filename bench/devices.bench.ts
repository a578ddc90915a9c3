// Devices benchmark: `npx tsx bench/devices.bench.ts [--count 10000] [--baseline 1000]`.
//
// A real server on a temporary SQLite file (WAL) serves from the main thread; a worker thread
// plays the fleet through `warren node simulate`'s code path (the typed NodeClient over HTTP,
// 32 enrollments in flight). It measures:
//   1. enrolling --count devices (target: under 60 s), in two steps: the first --baseline
//      devices, then the rest;
//   2. a heartbeat from every device (one UPDATE each), after each step;
//   3. GET /v1/devices filtered by tag + online, p50 at --baseline devices (the baseline) and at
//      --count devices, and the ratio: a selective filter (two tags + online, 50 devices match at
//      both sizes: it should not grow with the network) and a broad one (one tag + online, every
//      device matches: it grows with the answer).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Warren } from '@warren/client';
import { CompiledQuery } from 'kysely';
import type { Agent } from '../packages/cli/src/node/agent.js';
import { type Simulation, simulate } from '../packages/cli/src/node/fleet-simulator.js';
import { buildApp } from '../packages/server/src/app.js';
import { drivingTag, listDevicesQuery } from '../packages/server/src/modules/devices/devices.repository.js';
import { createNetwork } from '../packages/server/src/modules/tenants/tenants.service.js';
import { openStorage } from '../packages/server/src/storage/database.js';

const CANARIES = 50;
const SELECTIVE = { tag: ['tag:sim', 'tag:canary'], online: true } as const;
const BROAD = { tag: 'tag:sim', online: true } as const;

interface Step {
  devices: number;
  enrollSeconds: number;
  heartbeatSeconds: number;
  selective: { p50: number; rows: number };
  broad: { p50: number; rows: number };
}

type Message = { step: Step } | { error: string } | { done: true };

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });

async function p50(run: () => Promise<number>, times: number): Promise<{ p50: number; rows: number }> {
  let rows = 0;
  for (let i = 0; i < 3; i++) rows = await run();
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const started = performance.now();
    rows = await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, rows };
}

/** The fleet: enrolls through simulate(), heartbeats every device, times the filtered lists. */
async function fleet(url: string, apiKey: string, count: number, baseline: number): Promise<void> {
  const post = (message: Message) => parentPort!.postMessage(message);
  const admin = new Warren({ url, apiKey });
  // Auth keys may carry only tags the policy defines in tagOwners.
  const { text: policy } = await admin.acl.getText();
  const owners = '"tagOwners": { "tag:sim": [], "tag:bulk": [], "tag:canary": [] },';
  await admin.acl.set(policy.replace('"tagOwners": {},', owners));
  const bulk = await admin.keys.create({ type: 'auth', reusable: true, tags: ['tag:sim', 'tag:bulk'] });
  const canary = await admin.keys.create({ type: 'auth', reusable: true, tags: ['tag:sim', 'tag:canary'] });
  const agents: Agent[] = [];
  const run = async (key: string, n: number, prefix: string): Promise<Simulation> => {
    const sim = await simulate({
      server: url,
      authKey: key,
      count: n,
      concurrency: 32,
      hostnamePrefix: prefix,
      heartbeat: false,
      netmap: false,
      connections: false,
    });
    if (sim.failed) throw new Error(`${sim.failed} enrollments failed: ${JSON.stringify(sim.failures)}`);
    agents.push(...sim.agents);
    return sim;
  };
  const step = async (enrollSeconds: number): Promise<Step> => {
    // Every device heartbeats once (so all count as online), 32 at a time.
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < agents.length) await agents[next++]!.tick();
      }),
    );
    const heartbeatSeconds = (performance.now() - started) / 1000;
    if (agents.some((a) => a.heartbeats === 0)) throw new Error('a heartbeat failed');
    const times = agents.length > 5000 ? 20 : 40;
    return {
      devices: agents.length,
      enrollSeconds,
      heartbeatSeconds,
      selective: await p50(async () => (await admin.devices.list(SELECTIVE)).length, times * 5),
      broad: await p50(async () => (await admin.devices.list(BROAD)).length, times),
    };
  };

  const first =
    (await run(canary.key, CANARIES, 'canary')).seconds + (await run(bulk.key, baseline - CANARIES, 'a')).seconds;
  post({ step: await step(first) });
  const rest = (await run(bulk.key, count - baseline, 'b')).seconds;
  post({ step: await step(rest) });
  post({ done: true });
}

if (!isMainThread) {
  const { url, apiKey, count, baseline } = workerData as {
    url: string;
    apiKey: string;
    count: number;
    baseline: number;
  };
  fleet(url, apiKey, count, baseline).catch((error) =>
    parentPort!.postMessage({ error: String(error?.stack ?? error) }),
  );
} else {
  const { values: flags } = parseArgs({
    options: { count: { type: 'string', default: '10000' }, baseline: { type: 'string', default: '1000' } },
  });
  const count = Number(flags.count);
  const baseline = Number(flags.baseline);
  if (!(baseline > CANARIES && count > baseline)) throw new Error(`need --count > --baseline > ${CANARIES}`);

  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-devices-'));
  const storage = await openStorage(`sqlite:${join(dir, 'warren.db')}`);
  const network = await createNetwork(storage.db, {
    name: 'bench',
    ownerEmail: 'owner@example.com',
    plan: 'premium',
    now: Date.now(),
  });
  const app = await buildApp({ storage, settings: { apiRateLimit: 1_000_000 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  console.log(`devices benchmark: ${fmt(count)} devices (baseline ${fmt(baseline)}), server on SQLite ${dir}`);

  const steps: Step[] = [];
  // The worker loads this file through tsx, as bin/warren.js does.
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(boot, { eval: true, workerData: { url, apiKey: network.apiKey, count, baseline } });
  const print = (s: Step, enrolled: number) => {
    console.log(
      `  ${fmt(s.devices).padStart(6)} devices: enrolled ${fmt(enrolled)} in ${fmt(s.enrollSeconds, 1)} s ` +
        `(${fmt(enrolled / s.enrollSeconds)}/s); one heartbeat each in ${fmt(s.heartbeatSeconds, 1)} s ` +
        `(${fmt(s.devices / s.heartbeatSeconds)}/s)`,
    );
    console.log(
      `          list tag+tag+online: p50 ${fmt(s.selective.p50, 2)} ms (${s.selective.rows} rows); ` +
        `tag+online: p50 ${fmt(s.broad.p50, 1)} ms (${fmt(s.broad.rows)} rows)`,
    );
  };
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (message: Message) => {
      if ('error' in message) reject(new Error(message.error));
      else if ('done' in message) resolve();
      else {
        steps.push(message.step);
        print(message.step, message.step.devices - (steps[steps.length - 2]?.devices ?? 0));
      }
    });
    worker.on('error', reject);
  });
  await worker.terminate();

  const [base, full] = steps as [Step, Step];
  const total = base.enrollSeconds + full.enrollSeconds;
  const tags = [...SELECTIVE.tag];
  const driver = await drivingTag(storage.db, network.networkId, tags);
  const query = listDevicesQuery(storage.db, network.networkId, Date.now(), { tags, online: true, driver }).compile();
  const plan = await storage.db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]),
  );
  console.log('');
  console.log(
    `enroll ${fmt(count)} devices over HTTP: ${fmt(total, 1)} s (${fmt(count / total)}/s); target < 60 s: ${total < 60 ? 'met' : 'MISSED'}`,
  );
  console.log(
    `list tag+tag+online (${CANARIES} match at both sizes): p50 ${fmt(base.selective.p50, 2)} ms at ${fmt(base.devices)} → ` +
      `${fmt(full.selective.p50, 2)} ms at ${fmt(full.devices)}: ratio ${fmt(full.selective.p50 / base.selective.p50, 2)}`,
  );
  console.log(
    `list tag+online (every device matches): p50 ${fmt(base.broad.p50, 1)} ms at ${fmt(base.devices)} → ` +
      `${fmt(full.broad.p50, 1)} ms at ${fmt(full.devices)}: ratio ${fmt(full.broad.p50 / base.broad.p50, 2)} ` +
      `for ${fmt(full.broad.rows / base.broad.rows, 1)}× the rows`,
  );
  console.log(`plan of the selective filter: ${plan.rows.map((r) => r.detail).join(' | ')}`);
  await app.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
}

// Tailscale fleet benchmark: `npm run bench -- tailscale [--count 10000] [--baseline 500]
// [--rounds 3] [--group 5] [--concurrency 64] [--no-postgres] [--postgres URL]`.
//
// `warren serve` as users run it: first one instance on a SQLite file, then two instances on one
// PostgreSQL database (a database of its own per run, dropped after). A fleet of simulated
// Tailscale-protocol devices (`warren node simulate --protocol tailscale`: its own machine key,
// Noise IK over the ts2021 upgrade, HTTP/2, register with an auth key, a map stream held open)
// connects from this process, spread over the instances. Devices are tagged in groups of
// --group (tag:g0, tag:g1, …), and the policy lets each group reach itself, so each map holds
// a handful of peers, as in a fleet where each device talks to a few others.
//
// Figures, at --baseline devices and at --count devices, with the ratio of the two (1.0 = the
// cost does not grow with the fleet):
//   - registrations/s: devices connected, registered and holding their full map, per second;
//   - RSS per connected device: the growth of the instances' resident memory (summed) from
//     before the fleet connected to after, divided by the devices;
//   - policy change: a PUT /v1/acl that changes every device's packet filter (through the
//     first instance), then the time until each stream received its new filter; p50 and p99
//     over every stream of --rounds changes, and the last stream's time per change;
//   - one device's tag change: POST /v1/devices/{id}/tags moving one device to another group
//     (through the second instance where there are two), then the time until each stream
//     whose map it changes (its old group, its new group, itself) received it: p50, p99 and
//     the last, over --rounds changes; and how many other streams were sent anything.
// Goals: p99 < 2 s for a policy change, < 500 ms for one device's change, < 20 kB RSS per device.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { simulateTailscale, type TailscaleSimulation } from '../packages/cli/src/node/tailscale-simulator.js';
import type { MapMessage } from '../packages/server/src/index.js';
import { initWarren, serveWarren } from './warren-process.js';

const { values: flags } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    baseline: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '3' },
    group: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    postgres: { type: 'string' },
    'no-postgres': { type: 'boolean', default: false },
  },
});
const COUNT = Number(flags.count);
const BASELINE = Number(flags.baseline);
const ROUNDS = Number(flags.rounds);
const GROUP = Number(flags.group);
const CONCURRENCY = Number(flags.concurrency);
const postgresUrl =
  flags.postgres ??
  process.env.WARREN_BENCH_POSTGRES_URL ??
  process.env.WARREN_TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const groupOf = (index: number) => Math.floor(index / GROUP);

function policy(groups: number, port: number | '*'): string {
  const owners = Array.from({ length: groups + 1 }, (_, g) => `"tag:g${g}": ["autogroup:admin"]`);
  const rules = Array.from(
    { length: groups + 1 },
    (_, g) => `{ "action": "accept", "src": ["tag:g${g}"], "dst": ["tag:g${g}:${port}"] }`,
  );
  return `{ "tagOwners": { ${owners.join(', ')} }, "acls": [${rules.join(', ')}] }`;
}

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Figures {
  devices: number;
  perSecond: number;
  rssPerDevice: number;
  policy: { p50: number; p99: number; last: number[]; missed: number };
  tag: { p50: number; p99: number; last: number[]; missed: number; others: number };
}

async function call(url: string, apiKey: string, method: string, path: string, body?: unknown, type?: string) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { 'content-type': type ?? 'application/json' }),
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

async function settle(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const start = performance.now();
  while (!check()) {
    if (performance.now() - start > timeoutMs) return false;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return true;
}

/** One fleet of `count` devices against `instances` servers on `db`. */
async function run(db: string, instances: number, count: number): Promise<Figures> {
  const apiKey = initWarren(db);
  const servers = [];
  for (let i = 0; i < instances; i++) servers.push(await serveWarren(db));
  const urls = servers.map((s) => s.url);
  let sim: TailscaleSimulation | undefined;
  try {
    const groups = Math.ceil(count / GROUP);
    await call(urls[0], apiKey, 'PUT', '/v1/acl', policy(groups, '*'), 'application/hujson');
    const { key } = await call(urls[0], apiKey, 'POST', '/v1/keys', { type: 'auth', reusable: true });
    // Settle the servers' startup before measuring their memory.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssBefore = servers.reduce((sum, s) => sum + rssOf(s.child.pid!), 0);

    // What each stream last received after the change being timed, by device index.
    let watching: ((index: number, message: MapMessage, at: number) => void) | undefined;
    sim = await simulateTailscale({
      server: urls[0],
      servers: urls,
      authKey: key,
      count,
      concurrency: CONCURRENCY,
      hostnamePrefix: 'ts',
      tags: (index) => [`tag:g${groupOf(index)}`],
      onMessage: (index, message, at) => watching?.(index, message, at),
      progress: (line) => process.stderr.write(`  ${line}\n`),
    });
    if (sim.failed > 0) process.stderr.write(`  ${sim.failed} devices failed: ${JSON.stringify(sim.reasons)}\n`);
    const devices = sim.devices;
    // Let the peers' own arrival (deltas to earlier devices) and presence settle.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const rssPerDevice = (servers.reduce((sum, s) => sum + rssOf(s.child.pid!), 0) - rssBefore) / devices.length;

    // Policy changes: every stream's packet filter changes.
    const policyTimes: number[] = [];
    const policyLast: number[] = [];
    let policyMissed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const port = 1000 + round;
      const received = new Map<number, number>();
      let started = 0;
      watching = (index, message, at) => {
        if (received.has(index) || !message.PacketFilter) return;
        if (JSON.stringify(message.PacketFilter).includes(`"First":${port}`)) received.set(index, at - started);
      };
      started = performance.now();
      await call(urls[0], apiKey, 'PUT', '/v1/acl', policy(groups, port), 'application/hujson');
      await settle(() => received.size === devices.length, 30_000);
      policyMissed += devices.length - received.size;
      const times = [...received.values()];
      policyTimes.push(...times);
      policyLast.push(Math.max(...times));
    }

    // One device's tag change: device `moved` goes to the next group and back.
    const list = await call(urls[0], apiKey, 'GET', `/v1/devices?limit=${Math.min(count, 1000)}&q=ts-1`);
    const movedDevice = (list.devices as Array<{ id: string; name: string }>).find((d) => d.name === 'ts-1');
    if (!movedDevice) throw new Error('device ts-1 is not listed');
    const moved = 0;
    const tagTimes: number[] = [];
    const tagLast: number[] = [];
    let tagMissed = 0;
    let others = 0;
    const tagUrl = urls[urls.length - 1];
    for (let round = 0; round < ROUNDS; round++) {
      const from = round % 2 === 0 ? groupOf(moved) : groupOf(moved) + 1;
      const to = round % 2 === 0 ? groupOf(moved) + 1 : groupOf(moved);
      const affected = new Set(
        devices
          .filter((d) => d.index === moved || groupOf(d.index) === from || groupOf(d.index) === to)
          .map((d) => d.index),
      );
      const received = new Map<number, number>();
      let started = 0;
      watching = (index, _message, at) => {
        if (!affected.has(index)) others++;
        else if (!received.has(index)) received.set(index, at - started);
      };
      started = performance.now();
      await call(tagUrl, apiKey, 'POST', `/v1/devices/${movedDevice.id}/tags`, { tags: [`tag:g${to}`] });
      await settle(() => received.size === affected.size, 10_000);
      // Anything sent to a stream the change does not concern would arrive about as fast.
      await new Promise((resolve) => setTimeout(resolve, 500));
      tagMissed += affected.size - received.size;
      const times = [...received.values()];
      tagTimes.push(...times);
      tagLast.push(Math.max(...times));
    }
    watching = undefined;

    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const p = sorted(policyTimes);
    const t = sorted(tagTimes);
    return {
      devices: devices.length,
      perSecond: devices.length / sim.seconds,
      rssPerDevice,
      policy: { p50: percentile(p, 50), p99: percentile(p, 99), last: policyLast, missed: policyMissed },
      tag: { p50: percentile(t, 50), p99: percentile(t, 99), last: tagLast, missed: tagMissed, others },
    };
  } finally {
    sim?.stop();
    for (const s of servers) s.child.kill('SIGTERM');
    await Promise.all(servers.map((s) => new Promise((resolve) => s.child.once('exit', resolve))));
  }
}

function report(label: string, base: Figures, full: Figures): void {
  const ms = (n: number) => `${fmt(n)} ms`;
  const ratio = (a: number, b: number) => fmt(a / b, 2);
  const lines = [
    `${label}`,
    `  ${'figure'.padEnd(36)} ${`${fmt(base.devices)} dev`.padStart(12)} ${`${fmt(full.devices)} dev`.padStart(12)}  ratio`,
    `  ${'registrations/s'.padEnd(36)} ${fmt(base.perSecond).padStart(12)} ${fmt(full.perSecond).padStart(12)}  ${ratio(full.perSecond, base.perSecond)}`,
    `  ${'RSS per connected device'.padEnd(36)} ${`${fmt(base.rssPerDevice / 1024, 1)} kB`.padStart(12)} ${`${fmt(full.rssPerDevice / 1024, 1)} kB`.padStart(12)}  ${ratio(full.rssPerDevice, base.rssPerDevice)}`,
    `  ${'policy change → stream p50'.padEnd(36)} ${ms(base.policy.p50).padStart(12)} ${ms(full.policy.p50).padStart(12)}  ${ratio(full.policy.p50, base.policy.p50)}`,
    `  ${'policy change → stream p99'.padEnd(36)} ${ms(base.policy.p99).padStart(12)} ${ms(full.policy.p99).padStart(12)}  ${ratio(full.policy.p99, base.policy.p99)}`,
    `  ${'policy change → last stream (each)'.padEnd(36)} ${base.policy.last.map(fmt).join('/').padStart(12)} ${full.policy.last.map(fmt).join('/').padStart(12)}`,
    `  ${'tag change → affected stream p50'.padEnd(36)} ${ms(base.tag.p50).padStart(12)} ${ms(full.tag.p50).padStart(12)}  ${ratio(full.tag.p50, base.tag.p50)}`,
    `  ${'tag change → affected stream p99'.padEnd(36)} ${ms(base.tag.p99).padStart(12)} ${ms(full.tag.p99).padStart(12)}  ${ratio(full.tag.p99, base.tag.p99)}`,
    `  ${'tag change → last stream (each)'.padEnd(36)} ${base.tag.last.map(fmt).join('/').padStart(12)} ${full.tag.last.map(fmt).join('/').padStart(12)}`,
    `  ${'messages to unconcerned streams'.padEnd(36)} ${fmt(base.tag.others).padStart(12)} ${fmt(full.tag.others).padStart(12)}`,
    `  ${'updates missed (30 s / 10 s)'.padEnd(36)} ${fmt(base.policy.missed + base.tag.missed).padStart(12)} ${fmt(full.policy.missed + full.tag.missed).padStart(12)}`,
    `  goals at ${fmt(full.devices)}: policy p99 ${ms(full.policy.p99)} (< 2,000) · tag p99 ${ms(full.tag.p99)} (< 500) · ` +
      `${fmt(full.rssPerDevice / 1024, 1)} kB/device (< 20)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function sqliteRun(count: number): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-ts-'));
  try {
    return await run(`sqlite:${join(dir, 'warren.db')}`, 1, count);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function postgresRun(count: number): Promise<Figures> {
  const admin = new pg.Client({ connectionString: postgresUrl });
  await admin.connect();
  const name = `warren_bench_ts_${process.pid}_${count}`;
  await admin.query(`drop database if exists ${name}`);
  await admin.query(`create database ${name}`);
  const url = new URL(postgresUrl);
  url.pathname = `/${name}`;
  try {
    return await run(url.toString(), 2, count);
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  }
}

process.stdout.write(
  `Tailscale-protocol fleet: groups of ${GROUP} tagged devices, ${ROUNDS} changes each; baseline ${fmt(BASELINE)} devices\n`,
);
report('SQLite, one instance', await sqliteRun(BASELINE), await sqliteRun(COUNT));
if (!flags['no-postgres']) {
  const reachable = await new pg.Client({ connectionString: postgresUrl })
    .connect()
    .then((c) => c.end().then(() => true))
    .catch(() => false);
  if (reachable) report('PostgreSQL, two instances', await postgresRun(BASELINE), await postgresRun(COUNT));
  else process.stdout.write(`PostgreSQL at ${postgresUrl} is not reachable: skipped\n`);
}
process.exit(0);

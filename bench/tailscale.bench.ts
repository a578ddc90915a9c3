// Tailscale fleet benchmark: `npm run bench -- tailscale [--count 10000] [--baseline 500]
// [--rounds 3] [--group 5] [--concurrency 64] [--processes 2] [--no-postgres | --no-sqlite]
// [--postgres URL] [--compare headscale]`.
//
// `warren serve` as users run it: first one instance on a SQLite file, then two instances on one
// PostgreSQL database (a database of its own per run, dropped after); `--no-sqlite` runs the
// second pair alone. A fleet of simulated
// Tailscale-protocol devices (`warren node simulate --protocol tailscale`: its own machine key,
// Noise IK over the ts2021 upgrade, HTTP/2, register with an auth key, a map stream held open)
// connects from --processes child processes (2 by default; tailscale-fleet.ts), spread over the
// instances. Devices are tagged in groups of
// --group (tag:g0, tag:g1, …), and the policy lets each group reach itself, so each map holds
// a handful of peers, as in a fleet where each device talks to a few others.
//
// Figures, at --baseline devices and at --count devices, with the ratio of the two (1.0 = the
// cost does not grow with the fleet):
//   - registrations/s: devices connected, registered and holding their full map, per second;
//   - RSS per connected device: the growth of the instances' resident memory (summed) from
//     before the fleet connected to after, divided by the devices; for Warren also after a
//     full collection (bench/soak-probe.mjs preloaded), before the fleet and after it, so that
//     garbage not yet collected is not counted as what a device costs;
//   - policy change: a PUT /v1/acl that changes every device's packet filter (through the
//     first instance), then the time until each stream received its new filter; p50 and p99
//     over every stream of --rounds changes, and the last stream's time per change;
//   - server CPU per registration and per policy change: the instances' CPU time (user and
//     system, summed, from /proc) over the enrollment divided by the devices, and over the
//     policy changes divided by them; what the change costs the server whatever else the
//     machine runs, which the times above do not say on a shared machine; and each change's
//     own, from its PUT until its last stream received it (the first after the enrollment
//     first);
//   - simulator CPU per policy change: the CPU time of the fleet's processes and this one over
//     the policy changes (decrypting, decompressing and parsing every stream's update), divided
//     by them, and each change's own: when it nears the times above divided by --processes, the
//     simulator and not the server sets them (raise --processes, or run on a machine with more
//     cores);
//   - one device's tag change: POST /v1/devices/{id}/tags moving one device to another group
//     (through the second instance where there are two), then the time until each stream
//     whose map it changes (its old group, its new group, itself) received it: p50, p99 and
//     the last, over --rounds changes; and how many other streams were sent anything.
// Goals: p99 < 2 s for a policy change, < 500 ms for one device's change, < 20 kB RSS per device.
//
// A device whose stream or connection the server drops reconnects as tailscaled does (back-off
// with jitter, the same keys, a full map then deltas), so a server that sheds streams under load
// is measured with the fleet it actually serves. The table says how many devices failed to
// enroll, the fewest that held a stream when a change was made (each shortfall is also said on
// stderr as it happens), and how many reconnects there were; a stream that never received a
// change counts as infinitely late in the percentiles ("missed"), never as absent from them.
//
// `--compare headscale` runs the same fleet, policy and changes against Headscale instead of
// the baseline and PostgreSQL runs: Warren on SQLite, then Headscale on SQLite (built from its
// source once by headscale/build.sh, run by headscale/headscale-process.ts), each at --count
// devices, and prints both in one table with the ratio Headscale / Warren. Headscale tags a
// device by its pre-auth key rather than by the tags it asks for, so there each group has a
// tagged reusable key; its policy is the same rules with the bench user as the tags' owner; the
// policy goes through `PUT /api/v1/policy` and the tag change through
// `POST /api/v1/node/{id}/tags`, the REST calls behind `headscale policy set` and `headscale
// nodes tag`, as Warren's go through /v1. headscale/README.md says what keeps the two runs
// comparable (storage, tuning, policy, enrollment).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { startHeadscale } from './headscale/headscale-process.js';
import { type FeedRead, type MapBuilds, serveProbed } from './probed-server.js';
import { clock, type Fleet, type MapArrival, startFleet } from './tailscale-fleet.js';
import { initWarren } from './warren-process.js';

const { values: flags } = parseArgs({
  options: {
    count: { type: 'string', default: '10000' },
    baseline: { type: 'string', default: '500' },
    rounds: { type: 'string', default: '3' },
    group: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '64' },
    processes: { type: 'string', default: '2' },
    postgres: { type: 'string' },
    'no-postgres': { type: 'boolean', default: false },
    'no-sqlite': { type: 'boolean', default: false },
    compare: { type: 'string' },
  },
});
const COUNT = Number(flags.count);
const BASELINE = Number(flags.baseline);
const ROUNDS = Number(flags.rounds);
const GROUP = Number(flags.group);
const CONCURRENCY = Number(flags.concurrency);
const PROCESSES = Number(flags.processes);
/**
 * How long the streams are watched after a policy change: 30 s, or 6 ms a device past 5,000
 * (60 s at 10,000), so that a slow delivery on a loaded machine or two instances is measured
 * rather than counted as missed.
 */
const POLICY_WAIT_MS = Math.max(30_000, COUNT * 6);
/** How long the servers are left after the full collection of the memory figure, before the changes. */
const SETTLE_AFTER_COLLECTION_MS = 5_000;
const postgresUrl =
  flags.postgres ??
  process.env.WARREN_BENCH_POSTGRES_URL ??
  process.env.WARREN_TEST_POSTGRES_URL ??
  'postgres://postgres@127.0.0.1:5432/test';

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const groupOf = (index: number) => Math.floor(index / GROUP);
const groupsOf = (count: number) => Math.ceil(count / GROUP);

/** Each group reaches itself on `port`; the tags are owned by `owner`. */
function policy(groups: number, port: number | '*', owner = 'autogroup:admin'): string {
  const owners = Array.from({ length: groups + 1 }, (_, g) => `"tag:g${g}": ["${owner}"]`);
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

/** A process's CPU time so far (user and system), in ms. */
function cpuOf(pid: number): number {
  // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

/**
 * A stream that never received the update counts as infinitely late, so a device that was not
 * connected, or was never reached, shows in the percentiles rather than leaving them.
 */
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

interface Figures {
  devices: number;
  perSecond: number;
  rssPerDevice: number;
  /** The same from samples taken after a full collection (undefined: the subject cannot say). */
  collectedRssPerDevice?: number;
  /** Devices that did not enroll (after their retries). */
  failed: number;
  /** Devices holding a map stream when each change was made: policy changes, then tag changes. */
  connectedAt: number[];
  /** Streams the devices opened again after losing one (the server ended it or the connection), enrollment to end. */
  reconnects: number;
  /** Server CPU ms per device enrolled, and per policy change. */
  cpuPerDevice: number;
  cpuPerPolicy: number;
  /** Server CPU ms of each policy change in turn (the first after enrollment first). */
  cpuEachPolicy: number[];
  /** The simulator's CPU ms of each policy change in turn. */
  simCpuEachPolicy: number[];
  /** This process's CPU ms per policy change: the simulated fleet decoding what it receives. */
  simCpuPerPolicy: number;
  /** Each policy change's stream builds, per instance (undefined: the subject cannot say). */
  buildsEachPolicy?: MapBuilds[][];
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

/** A Tailscale-protocol control server as the fleet run drives it. */
interface Subject {
  /** Where the devices connect (device i to urls[i % length]). */
  urls: string[];
  /** The server processes, whose resident memory is measured. */
  pids: number[];
  /** The servers' resident memory (summed) right after each made a full collection, where it can. */
  collectedRss?: () => Promise<number>;
  /** Puts the policy in which each group reaches itself on `port`. */
  setPolicy(port: number | '*'): Promise<void>;
  /** What device `index` registers with to join group tag:g<groupOf(index)>. */
  enrolment(): Promise<{ authKey: string | string[]; tagged: boolean }>;
  /** The server's id of the device named `hostname`. */
  deviceId(hostname: string): Promise<string>;
  /** Moves device `id` to tag:g<group>. */
  moveDevice(id: string, group: number): Promise<void>;
  /** The open streams' builds so far, per server (within a second), where it can say. */
  builds?: () => Promise<MapBuilds[]>;
  /** The change reads in which the policy moved, per server. */
  feedReads?: () => FeedRead[][];
  stop(): Promise<void>;
}

/** `instances` of `warren serve` on `db`. */
async function warrenSubject(db: string, instances: number, groups: number): Promise<Subject> {
  const apiKey = initWarren(db);
  const probes = mkdtempSync(join(tmpdir(), 'warren-bench-ts-probe-'));
  const servers: Array<Awaited<ReturnType<typeof serveProbed>>> = [];
  // The fleet's policy has a rule per group (2,001 at 10,000 devices): on a loaded machine its
  // validation can pass the default 1.5 s budget and the change is refused (422). What is
  // measured is its delivery, so the servers get a generous budget unless one is set.
  const env = { WARREN_POLICY_TIME_BUDGET_MS: process.env.WARREN_POLICY_TIME_BUDGET_MS ?? '20000' };
  for (let i = 0; i < instances; i++) servers.push(await serveProbed(db, join(probes, `probe-${i}.jsonl`), { env }));
  const urls = servers.map((s) => s.url);
  return {
    urls,
    pids: servers.map((s) => s.child.pid!),
    collectedRss: async () => {
      const samples = await Promise.all(servers.map((s) => s.collected()));
      return samples.reduce((sum, sample) => sum + sample.rss, 0);
    },
    builds: () => Promise.all(servers.map((s) => s.builds())),
    feedReads: () => servers.map((s) => s.feedReads()),
    setPolicy: (port) => call(urls[0], apiKey, 'PUT', '/v1/acl', policy(groups, port), 'application/hujson'),
    enrolment: async () => {
      const { key } = await call(urls[0], apiKey, 'POST', '/v1/keys', { type: 'auth', reusable: true });
      return { authKey: key, tagged: true };
    },
    deviceId: async (hostname) => {
      const list = await call(urls[0], apiKey, 'GET', `/v1/devices?limit=1000&q=${hostname}`);
      const device = (list.devices as Array<{ id: string; name: string }>).find((d) => d.name === hostname);
      if (!device) throw new Error(`device ${hostname} is not listed`);
      return device.id;
    },
    // Through the last instance: where there are two, the change crosses between them.
    moveDevice: (id, group) =>
      call(urls[urls.length - 1], apiKey, 'POST', `/v1/devices/${id}/tags`, { tags: [`tag:g${group}`] }),
    stop: async () => {
      for (const s of servers) s.child.kill('SIGTERM');
      await Promise.all(servers.map((s) => new Promise((resolve) => s.child.once('exit', resolve))));
      rmSync(probes, { recursive: true, force: true });
    },
  };
}

/** Headscale, on a SQLite file of its own. */
async function headscaleSubject(bin: string, groups: number): Promise<Subject> {
  const user = 'bench';
  const hs = await startHeadscale(bin, user);
  try {
    const { users } = (await hs.api('GET', `/api/v1/user?name=${user}`)) as { users: Array<{ id: string }> };
    const userId = users[0].id;
    return {
      urls: [hs.url],
      pids: [hs.child.pid!],
      setPolicy: async (port) => {
        await hs.api('PUT', '/api/v1/policy', { policy: policy(groups, port, `${user}@`) });
      },
      enrolment: async () => {
        const expiration = new Date(Date.now() + 86_400_000).toISOString();
        const keys: string[] = [];
        for (let g = 0; g < groups; g++) {
          const { preAuthKey } = (await hs.api('POST', '/api/v1/preauthkey', {
            user: userId,
            reusable: true,
            expiration,
            aclTags: [`tag:g${g}`],
          })) as { preAuthKey: { key: string } };
          keys.push(preAuthKey.key);
        }
        return { authKey: keys, tagged: false };
      },
      deviceId: async (hostname) => {
        const { nodes } = (await hs.api('GET', '/api/v1/node')) as { nodes: Array<{ id: string; name: string }> };
        const node = nodes.find((n) => n.name === hostname);
        if (!node) throw new Error(`node ${hostname} is not listed`);
        return node.id;
      },
      moveDevice: async (id, group) => {
        await hs.api('POST', `/api/v1/node/${id}/tags`, { tags: [`tag:g${group}`] });
      },
      stop: hs.stop,
    };
  } catch (error) {
    await hs.stop();
    throw error;
  }
}

/**
 * Makes a change whose call the server may drop (Headscale's HTTP server ends a request at its
 * 30 s write timeout even when the change goes on): said on stderr, and the streams are still
 * timed, since they show whether the change was made.
 */
async function tolerate(what: string, change: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  await change().catch((error: Error) => {
    const cause = (error.cause as Error | undefined)?.message ?? '';
    process.stderr.write(
      `  the ${what}'s call failed after ${fmt(performance.now() - start)} ms: ${error.message} ${cause}\n`,
    );
  });
}

/** One fleet of `count` devices against `subject`. */
async function run(subject: Subject, count: number): Promise<Figures> {
  const { urls } = subject;
  let sim: Fleet | undefined;
  try {
    await subject.setPolicy('*');
    const { authKey, tagged } = await subject.enrolment();
    // Settle the servers' startup before measuring their memory.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rss = () => subject.pids.reduce((sum, pid) => sum + rssOf(pid), 0);
    const collectedBefore = await subject.collectedRss?.();
    const rssBefore = rss();
    const cpu = () => subject.pids.reduce((sum, pid) => sum + cpuOf(pid), 0);
    const cpuBefore = cpu();

    // What each stream last received after the change being timed, by device index.
    let watching: ((arrival: MapArrival) => void) | undefined;
    sim = await startFleet({ urls, authKey, tagged, group: GROUP, prefix: 'ts' }, count, {
      processes: PROCESSES,
      concurrency: CONCURRENCY,
      onMap: (arrival) => watching?.(arrival),
      progress: (line) => process.stderr.write(`  ${line}\n`),
    });
    if (sim.failed > 0) process.stderr.write(`  ${sim.failed} devices failed: ${JSON.stringify(sim.reasons)}\n`);
    const devices = sim.devices;
    const live = sim;
    const connectedAt: number[] = [];
    /** Notes how many devices hold a stream as a change is made, and says so when some do not. */
    const census = async (what: string) => {
      const now = (await live.census()).connected;
      connectedAt.push(now);
      if (now < devices.length)
        process.stderr.write(
          `  ${what}: ${fmt(devices.length - now)} of ${fmt(devices.length)} devices were reconnecting\n`,
        );
    };
    // Let the peers' own arrival (deltas to earlier devices) and presence settle.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const rssPerDevice = (rss() - rssBefore) / devices.length;
    const cpuPerDevice = (cpu() - cpuBefore) / devices.length;
    // After the CPU of the enrollment is read, and before that of the policy changes.
    const collectedAfter = collectedBefore === undefined ? undefined : await subject.collectedRss?.();
    const collectedRssPerDevice =
      collectedAfter === undefined || collectedBefore === undefined
        ? undefined
        : (collectedAfter - collectedBefore) / devices.length;
    // V8 sweeps what the collection freed after it, on its own threads and in the scavenges
    // that promote into old space: the first change would be timed with that, the second not
    // (at 10,000 devices its scavenges cost twice the second's without this pause).
    if (collectedAfter !== undefined) await new Promise((resolve) => setTimeout(resolve, SETTLE_AFTER_COLLECTION_MS));
    const cpuBeforePolicy = cpu();
    // The simulator's CPU: this process's and the fleet's processes'.
    const simCpu = () => {
      const own = process.cpuUsage();
      return (own.user + own.system) / 1000 + live.pids.reduce((sum, pid) => sum + cpuOf(pid), 0);
    };
    const simCpuBeforePolicy = simCpu();

    // Policy changes: every stream's packet filter changes.
    const policyTimes: number[] = [];
    const policyLast: number[] = [];
    const cpuEachPolicy: number[] = [];
    const simCpuEachPolicy: number[] = [];
    const buildsEachPolicy: MapBuilds[][] = [];
    let policyMissed = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const port = 1000 + round;
      const received = new Map<number, number>();
      let started = 0;
      watching = ({ index, filter, at }) => {
        if (received.has(index) || !filter) return;
        if (filter.includes(`"First":${port}`)) received.set(index, at - started);
      };
      await census(`policy change ${round + 1}`);
      const buildsBefore = await subject.builds?.();
      const cpuBeforeRound = cpu();
      const simCpuBeforeRound = simCpu();
      started = clock();
      await tolerate('policy change', () => subject.setPolicy(port));
      await settle(() => received.size === devices.length, POLICY_WAIT_MS);
      cpuEachPolicy.push(cpu() - cpuBeforeRound);
      simCpuEachPolicy.push(simCpu() - simCpuBeforeRound);
      const buildsAfter = await subject.builds?.();
      if (buildsBefore && buildsAfter) {
        buildsEachPolicy.push(
          buildsAfter.map((after, i) => ({
            filterOnly: after.filterOnly - buildsBefore[i].filterOnly,
            whole: after.whole - buildsBefore[i].whole,
            declined: after.declined - buildsBefore[i].declined,
          })),
        );
      }
      policyMissed += devices.length - received.size;
      const times = [...received.values(), ...Array(devices.length - received.size).fill(Number.POSITIVE_INFINITY)];
      policyTimes.push(...times);
      policyLast.push(Math.max(...times));
    }
    const cpuPerPolicy = (cpu() - cpuBeforePolicy) / ROUNDS;
    const simCpuPerPolicy = (simCpu() - simCpuBeforePolicy) / ROUNDS;

    // One device's tag change: device `moved` goes to the next group and back.
    const moved = 0;
    const movedId = await subject.deviceId(`ts-${moved + 1}`);
    const tagTimes: number[] = [];
    const tagLast: number[] = [];
    let tagMissed = 0;
    let others = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const from = round % 2 === 0 ? groupOf(moved) : groupOf(moved) + 1;
      const to = round % 2 === 0 ? groupOf(moved) + 1 : groupOf(moved);
      const affected = new Set(
        devices.filter((index) => index === moved || groupOf(index) === from || groupOf(index) === to),
      );
      const received = new Map<number, number>();
      let started = 0;
      watching = ({ index, at }) => {
        if (!affected.has(index)) others++;
        else if (!received.has(index)) received.set(index, at - started);
      };
      await census(`tag change ${round + 1}`);
      started = clock();
      await tolerate('tag change', () => subject.moveDevice(movedId, to));
      await settle(() => received.size === affected.size, 10_000);
      // Anything sent to a stream the change does not concern would arrive about as fast.
      await new Promise((resolve) => setTimeout(resolve, 500));
      tagMissed += affected.size - received.size;
      const times = [...received.values(), ...Array(affected.size - received.size).fill(Number.POSITIVE_INFINITY)];
      tagTimes.push(...times);
      tagLast.push(Math.max(...times));
    }
    watching = undefined;
    sayFeedReads(subject.feedReads?.() ?? []);

    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const p = sorted(policyTimes);
    const t = sorted(tagTimes);
    return {
      devices: devices.length,
      perSecond: devices.length / sim.seconds,
      rssPerDevice,
      collectedRssPerDevice,
      failed: sim.failed,
      connectedAt,
      reconnects: (await sim.census()).reconnects,
      cpuPerDevice,
      cpuPerPolicy,
      cpuEachPolicy,
      simCpuPerPolicy,
      simCpuEachPolicy,
      ...(buildsEachPolicy.length > 0 ? { buildsEachPolicy } : {}),
      policy: { p50: percentile(p, 50), p99: percentile(p, 99), last: policyLast, missed: policyMissed },
      tag: { p50: percentile(t, 50), p99: percentile(t, 99), last: tagLast, missed: tagMissed, others },
    };
  } finally {
    await sim?.stop();
    await subject.stop();
  }
}

/**
 * Each change read in which the policy moved, per server, on stderr: the heads it was read
 * between say why the streams built the filter alone or the whole map.
 */
function sayFeedReads(perServer: FeedRead[][]): void {
  const epochs = (h: FeedRead['feed']['head'] | undefined) =>
    h ? `netmap ${h.epoch} presence ${h.presenceEpoch} policy ${h.policyVersion}` : 'none';
  perServer.forEach((reads, i) => {
    for (const { feed, builds } of reads) {
      process.stderr.write(
        `  instance ${i + 1}: policy read ${epochs(feed.previous)} → ${epochs(feed.head)}: ` +
          `${feed.policyOnly ? 'policy only' : 'not policy only'}` +
          `${feed.devices === undefined ? '' : `, ${feed.devices} devices`} (builds before: ${builds.filterOnly} filter, ${builds.whole + builds.declined} whole)\n`,
      );
    }
  });
}

/**
 * Per change, the builds of every server: `filter alone/whole/whole where the filter alone was
 * asked for`, servers joined by `+`, changes by a space.
 */
const buildsText = (figures: Figures) =>
  figures.buildsEachPolicy
    ?.map((servers) => servers.map((b) => `${fmt(b.filterOnly)}/${fmt(b.whole)}/${fmt(b.declined)}`).join('+'))
    .join(' ') ?? '–';

/**
 * Two runs side by side with the ratio second / first: the baseline and the full fleet, or
 * Warren and Headscale at one fleet size. The goals are read on `goals`.
 */
function report(label: string, base: Figures, full: Figures, titles: [string, string], goals: Figures): void {
  const ms = (n: number) => (Number.isFinite(n) ? `${fmt(n)} ms` : 'missed');
  const ratio = (a: number, b: number) => fmt(a / b, 2);
  const kBOrNone = (bytes: number | undefined) => (bytes === undefined ? '–' : `${fmt(bytes / 1024, 1)} kB`);
  const row = (name: string, a: string, b: string, r = '') =>
    `  ${name.padEnd(36)} ${a.padStart(12)} ${b.padStart(12)}  ${r}`;
  const lines = [
    `${label}`,
    row('figure', titles[0], titles[1], 'ratio'),
    row('devices enrolled', fmt(base.devices), fmt(full.devices)),
    row('devices that failed to enroll', fmt(base.failed), fmt(full.failed)),
    row('fewest connected at a change', fmt(Math.min(...base.connectedAt)), fmt(Math.min(...full.connectedAt))),
    row('reconnects (enrollment to end)', fmt(base.reconnects), fmt(full.reconnects)),
    row('registrations/s', fmt(base.perSecond), fmt(full.perSecond), ratio(full.perSecond, base.perSecond)),
    row(
      'RSS per connected device',
      `${fmt(base.rssPerDevice / 1024, 1)} kB`,
      `${fmt(full.rssPerDevice / 1024, 1)} kB`,
      ratio(full.rssPerDevice, base.rssPerDevice),
    ),
    row(
      '  after a full collection',
      kBOrNone(base.collectedRssPerDevice),
      kBOrNone(full.collectedRssPerDevice),
      base.collectedRssPerDevice && full.collectedRssPerDevice
        ? ratio(full.collectedRssPerDevice, base.collectedRssPerDevice)
        : '',
    ),
    row(
      'server CPU per registration',
      ms(base.cpuPerDevice),
      ms(full.cpuPerDevice),
      ratio(full.cpuPerDevice, base.cpuPerDevice),
    ),
    row(
      'server CPU per policy change',
      ms(base.cpuPerPolicy),
      ms(full.cpuPerPolicy),
      ratio(full.cpuPerPolicy, base.cpuPerPolicy),
    ),
    row(
      '  each change, until its last stream',
      base.cpuEachPolicy.map((n) => fmt(n)).join('/'),
      full.cpuEachPolicy.map((n) => fmt(n)).join('/'),
    ),
    row(
      'simulator CPU per policy change',
      ms(base.simCpuPerPolicy),
      ms(full.simCpuPerPolicy),
      ratio(full.simCpuPerPolicy, base.simCpuPerPolicy),
    ),
    row(
      '  each change, until its last stream',
      base.simCpuEachPolicy.map((n) => fmt(n)).join('/'),
      full.simCpuEachPolicy.map((n) => fmt(n)).join('/'),
    ),
    row('  builds filter/whole/shape (each)', buildsText(base), buildsText(full)),
    row(
      'policy change → stream p50',
      ms(base.policy.p50),
      ms(full.policy.p50),
      ratio(full.policy.p50, base.policy.p50),
    ),
    row(
      'policy change → stream p99',
      ms(base.policy.p99),
      ms(full.policy.p99),
      ratio(full.policy.p99, base.policy.p99),
    ),
    row(
      'policy change → last stream (each)',
      base.policy.last.map((n) => fmt(n)).join('/'),
      full.policy.last.map((n) => fmt(n)).join('/'),
    ),
    row('tag change → affected stream p50', ms(base.tag.p50), ms(full.tag.p50), ratio(full.tag.p50, base.tag.p50)),
    row('tag change → affected stream p99', ms(base.tag.p99), ms(full.tag.p99), ratio(full.tag.p99, base.tag.p99)),
    row(
      'tag change → last stream (each)',
      base.tag.last.map((n) => fmt(n)).join('/'),
      full.tag.last.map((n) => fmt(n)).join('/'),
    ),
    row('messages to unconcerned streams', fmt(base.tag.others), fmt(full.tag.others)),
    row(
      `updates missed (${fmt(POLICY_WAIT_MS / 1000)} s / 10 s)`,
      fmt(base.policy.missed + base.tag.missed),
      fmt(full.policy.missed + full.tag.missed),
    ),
    `  goals at ${fmt(goals.devices)}: policy p99 ${ms(goals.policy.p99)} (< 2,000) · tag p99 ${ms(goals.tag.p99)} (< 500) · ` +
      `${fmt(goals.rssPerDevice / 1024, 1)} kB/device (< 20)`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}

const devicesTitles = (base: Figures, full: Figures): [string, string] => [
  `${fmt(base.devices)} dev`,
  `${fmt(full.devices)} dev`,
];

async function sqliteRun(count: number): Promise<Figures> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-ts-'));
  try {
    return await run(await warrenSubject(`sqlite:${join(dir, 'warren.db')}`, 1, groupsOf(count)), count);
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
    return await run(await warrenSubject(url.toString(), 2, groupsOf(count)), count);
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => {});
    await admin.end();
  }
}

/** Headscale built from its source (headscale/build.sh prints the cached binary's path). */
async function headscaleRun(count: number): Promise<{ version: string; figures: Figures }> {
  const bin = execFileSync('bash', [join(import.meta.dirname, 'headscale', 'build.sh')], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }).trim();
  return { version: basename(dirname(bin)), figures: await run(await headscaleSubject(bin, groupsOf(count)), count) };
}

if (flags.compare !== undefined && flags.compare !== 'headscale') {
  process.stderr.write(`--compare takes "headscale", not "${flags.compare}"\n`);
  process.exit(2);
}
if (flags.compare === 'headscale') {
  process.stdout.write(
    `Tailscale-protocol fleet, Warren and Headscale on one machine: ${fmt(COUNT)} devices in groups of ${GROUP}, ` +
      `${ROUNDS} changes each\n`,
  );
  const warren = await sqliteRun(COUNT);
  // Each server's figures as soon as they are known, so a later failure does not lose them.
  process.stdout.write(`Warren: ${JSON.stringify(warren)}\n`);
  const headscale = await headscaleRun(COUNT);
  process.stdout.write(`Headscale: ${JSON.stringify(headscale.figures)}\n`);
  report(
    `SQLite, one instance each (ratio Headscale / Warren)`,
    warren,
    headscale.figures,
    ['Warren', `Headscale ${headscale.version}`],
    warren,
  );
  process.exit(0);
}

process.stdout.write(
  `Tailscale-protocol fleet: groups of ${GROUP} tagged devices, ${ROUNDS} changes each; baseline ${fmt(BASELINE)} devices\n`,
);
if (!flags['no-sqlite']) {
  const [base, full] = [await sqliteRun(BASELINE), await sqliteRun(COUNT)];
  report('SQLite, one instance', base, full, devicesTitles(base, full), full);
}
if (!flags['no-postgres']) {
  const reachable = await new pg.Client({ connectionString: postgresUrl })
    .connect()
    .then((c) => c.end().then(() => true))
    .catch(() => false);
  if (reachable) {
    const [base, full] = [await postgresRun(BASELINE), await postgresRun(COUNT)];
    report('PostgreSQL, two instances', base, full, devicesTitles(base, full), full);
  } else process.stdout.write(`PostgreSQL at ${postgresUrl} is not reachable: skipped\n`);
}
process.exit(0);

// Netmap benchmark: `npx tsx bench/netmap.bench.ts [--count 10000] [--baseline 1000]`.
//
// A real server on a temporary SQLite file (WAL) with two networks in one database: the
// baseline (--baseline devices) and the full one (--count devices). Devices, users and routes
// are inserted with SQL (enrollment has its own benchmark); each network gets the same policy
// of about 100 rules, applied through PUT /v1/acl. Then, over HTTP with a node credential:
//   1. GET /v1/node/netmap of a "selective" device, whose peers are the same few at both
//      sizes (the cost should not grow with the network), and of a "broad" device, whose
//      peers grow with the network (the cost follows its answer): p50 and p95, warm cache.
//      Target: p50 < 10 ms for the broad device at --count devices.
//   2. The same right after the netmap epoch moved: after a policy PUT (every instance rebuilds
//      its view), and after one device's tag change (the view is patched from the netmap change
//      log: only that device is read again).
//   3. POST /v1/node/heartbeat of the broad device (it answers the view's version too); of a
//      device that sees everyone right after another device went offline or came back (its
//      view changed), first and second after the change; and a conditional GET
//      /v1/node/netmap (If-None-Match: the version held) that answers 304.
//   4. After such a presence change, the netmap of a device that sees everyone, whole and as a
//      delta since the version it held (?delta=true): time and bytes received.
//   5. In the server's process, without HTTP: the time to bring the network's view up to date
//      after one device's tag change — patched, and rebuilt from scratch for the same change —
//      which is the server time until every netmap the change affects can be served from it.
// Presence is frozen with a fixed clock, so every device stays online while it runs.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { buildApp } from '../packages/server/src/app.js';
import { newId } from '../packages/server/src/lib/ids.js';
import { generateSecret, hashSecret } from '../packages/server/src/lib/secrets.js';
import { networkView } from '../packages/server/src/modules/netmap/netmap.cache.js';
import { netmapHead } from '../packages/server/src/modules/netmap/netmap.repository.js';
import { createNetwork } from '../packages/server/src/modules/tenants/tenants.service.js';
import { openStorage } from '../packages/server/src/storage/database.js';

const USERS = 500;
const ADMINS = 5;
const GROUPS = 20;
const TAGS = 20;
const NETS = 10;
const ROUTERS = 20;
const SOLO = 4;

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const login = (u: number) => `u${u}@example.com`;
/** Each user is in two groups. */
const groupsOf = (u: number) => [...new Set([u % GROUPS, (u * 7 + 3) % GROUPS])];

/** About 100 rules: teams reach the tagged services they run, services reach each other and subnets. */
function policy(): string {
  const lines = ['// Generated for the netmap benchmark.', '{', '  "groups": {'];
  for (let g = 0; g < GROUPS; g++) {
    const members = Array.from({ length: USERS }, (_, u) => u).filter((u) => groupsOf(u).includes(g));
    lines.push(`    "group:g${g}": [${members.map((u) => `"${login(u)}"`).join(', ')}],`);
  }
  lines.push('  },', '  "tagOwners": {');
  for (let t = 0; t < TAGS; t++) lines.push(`    "tag:t${t}": ["autogroup:admin"],`);
  lines.push('    "tag:solo": ["autogroup:admin"],', '  },', '  "hosts": {');
  for (let n = 0; n < NETS; n++) lines.push(`    "net${n}": "10.${n}.0.0/16",`);
  lines.push('  },', '  "acls": [');
  const rule = (src: string, dst: string[]) =>
    lines.push(`    { "action": "accept", "src": ["${src}"], "dst": [${dst.map((d) => `"${d}"`).join(', ')}] },`);
  rule('autogroup:member', ['autogroup:self:*']);
  rule('autogroup:admin', ['*:*']);
  rule('tag:solo', ['tag:solo:22']);
  for (let g = 0; g < GROUPS; g++) {
    rule(`group:g${g}`, [`tag:t${g}:22`, `tag:t${(g + 1) % TAGS}:443`]);
    rule(`group:g${g}`, [`tag:t${(g + 5) % TAGS}:80,443`]);
    rule(`group:g${g}`, [`net${g % NETS}:*`]);
  }
  for (let t = 0; t < TAGS; t++) {
    rule(`tag:t${t}`, [`tag:t${(t + 1) % TAGS}:5432`]);
    rule(`tag:t${t}`, [`net${t % NETS}:443`]);
  }
  lines.push('  ],', '  "autoApprovers": { "routes": { "10.0.0.0/8": ["tag:t0"] } },', '}', '');
  return lines.join('\n');
}

interface Fleet {
  networkId: string;
  apiKey: string;
  broad: string;
  selective: string;
  /** Two devices of one admin: each sees every device. */
  everyone: string;
  everyoneToo: string;
  /** A device whose presence the benchmark toggles. */
  flipper: string;
  /** A tag:t5 service the broad device reaches, re-tagged between tag:t5 and tag:t6 (both in its view). */
  retagged: string;
}

/**
 * One network of `count` devices: 2 per admin, SOLO tag:solo devices, ROUTERS tag:t0 routers
 * serving approved routes (two per subnet), then half tagged round-robin, half untagged
 * round-robin over the users.
 */
async function populate(db: any, count: number, now: number): Promise<Fleet> {
  const created = await createNetwork(db, {
    name: `bench-${count}`,
    ownerEmail: 'owner@example.com',
    plan: 'premium',
    now,
  });
  const networkId = created.networkId;
  const users = Array.from({ length: USERS }, (_, u) => ({
    id: newId('user'),
    network_id: networkId,
    login_name: login(u),
    display_name: `u${u}`,
    role: u < ADMINS ? 'admin' : 'member',
    status: 'active',
    created_at: now,
    last_seen_at: null,
  }));
  for (let i = 0; i < users.length; i += 200)
    await db
      .insertInto('users')
      .values(users.slice(i, i + 200))
      .execute();

  const devices: any[] = [];
  const tags: any[] = [];
  const routes: any[] = [];
  const tokens = new Map<string, string>();
  const add = (name: string, userIndex: number, deviceTags: string[]) => {
    const i = devices.length + 1;
    const token = generateSecret('node');
    const id = newId('device');
    tokens.set(name, token);
    devices.push({
      id,
      network_id: networkId,
      name,
      name_base: name,
      name_seq: 0,
      hostname: name,
      os: 'linux',
      user_id: users[userIndex].id,
      tags: JSON.stringify(deviceTags),
      node_key: `nodekey:${i.toString(16).padStart(64, '0')}`,
      addr_index: i,
      client_version: '1.0.0',
      key_id: null,
      ephemeral: 0,
      created_at: now + i,
      last_seen_at: now,
      disconnected: 0,
      expires_at: null,
      node_token_hash: hashSecret(token),
      netmap_version: 1,
      netmap_hash: null,
      advertised_routes: '',
    });
    for (const tag of deviceTags) tags.push({ network_id: networkId, tag, device_id: id });
    return id;
  };
  for (let a = 0; a < ADMINS; a++) for (let k = 0; k < 2; k++) add(`admin-${a}-${k}`, a, []);
  for (let s = 0; s < SOLO; s++) add(`solo-${s}`, ADMINS, ['tag:solo']);
  for (let r = 0; r < ROUTERS; r++) {
    const id = add(`router-${r}`, ADMINS, ['tag:t0']);
    const prefix = `10.${r % NETS}.0.0/16`;
    devices[devices.length - 1].advertised_routes = prefix;
    routes.push({
      id: newId('route'),
      network_id: networkId,
      device_id: id,
      prefix,
      state: 'approved',
      advertised: 1,
      auto_approved: 1,
      approved_at: now + r,
      approved_by: 'autoApprovers',
      created_at: now,
    });
  }
  for (let n = 0; devices.length < count; n++) {
    if (n % 2 === 0) add(`svc-${n}`, ADMINS + (n % (USERS - ADMINS)), [`tag:t${(n / 2) % TAGS}`]);
    else add(`host-${n}`, ADMINS + (n % (USERS - ADMINS)), []);
  }
  await db.transaction().execute(async (trx: any) => {
    for (let i = 0; i < devices.length; i += 500)
      await trx
        .insertInto('devices')
        .values(devices.slice(i, i + 500))
        .execute();
    for (let i = 0; i < tags.length; i += 500)
      await trx
        .insertInto('device_tags')
        .values(tags.slice(i, i + 500))
        .execute();
    await trx.insertInto('routes').values(routes).execute();
    await trx
      .updateTable('networks')
      .set({ next_addr_index: devices.length + 1 })
      .where('id', '=', networkId)
      .execute();
  });
  // The broad device: an untagged device of member u6 (groups g5 and g6: five tags, two subnets).
  const broad = devices.find((d) => d.name.startsWith('host-') && d.user_id === users[6].id);
  return {
    networkId,
    apiKey: created.apiKey,
    broad: tokens.get(broad!.name)!,
    selective: tokens.get('solo-0')!,
    everyone: tokens.get('admin-0-0')!,
    everyoneToo: tokens.get('admin-0-1')!,
    flipper: tokens.get('solo-1')!,
    retagged: devices.find((d) => d.name === 'svc-10')!.id,
  };
}

interface Timing {
  p50: number;
  p95: number;
  peers: number;
}

interface Job {
  url: string;
  fleets: { base: Fleet; full: Fleet };
  policy: string;
}

/** `bytes`: the timings' `peers` count bytes received, not peers. */
type Row = { label: string; base: Timing; full: Timing; bytes?: boolean };

async function measure(run: () => Promise<number>, times: number, before?: () => Promise<void>): Promise<Timing> {
  let peers = 0;
  for (let i = 0; i < 10; i++) peers = await run();
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    if (before) await before();
    const started = performance.now();
    peers = await run();
    samples.push(performance.now() - started);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, p95: samples[Math.floor(samples.length * 0.95)]!, peers };
}

/** Re-tags the fleet's `retagged` device between tag:t5 and tag:t6 on each call, through the API. */
function retag(url: string, fleet: Fleet): () => Promise<void> {
  let turn = 0;
  return async () => {
    const tags = [turn++ % 2 === 0 ? 'tag:t6' : 'tag:t5'];
    const res = await fetch(`${url}/v1/devices/${fleet.retagged}/tags`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fleet.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ tags }),
    });
    if (res.status !== 200) throw new Error(`POST tags: ${res.status} ${await res.text()}`);
  };
}

/**
 * In the server's process: after each tag change, the time to bring the network's view to the
 * new epoch — the head read, the change log, the changed device's row and the patch — or, with
 * `rebuild`, to load it from scratch for the same change. p50 and p95 over `times` changes.
 */
async function viewUpdate(db: any, url: string, fleet: Fleet, rebuild: boolean, times: number): Promise<Timing> {
  const change = retag(url, fleet);
  const samples: number[] = [];
  for (let i = 0; i < times + 5; i++) {
    await change();
    const started = performance.now();
    const view = await networkView(db, fleet.networkId, (await netmapHead(db, fleet.networkId))!, rebuild);
    const took = performance.now() - started;
    if (!view.index.has(fleet.retagged)) throw new Error('the view lost the re-tagged device');
    if (i >= 5) samples.push(took);
  }
  samples.sort((a, b) => a - b);
  return { p50: samples[Math.floor(samples.length / 2)]!, p95: samples[Math.floor(samples.length * 0.95)]!, peers: 0 };
}

/** The devices' side, in a worker thread so that client and server do not share an event loop. */
async function client({ url, fleets, policy }: Job): Promise<Row[]> {
  const getNetmap = async (token: string) => {
    const res = await fetch(`${url}/v1/node/netmap`, { headers: { authorization: `Bearer ${token}` } });
    const text = await res.text();
    if (res.status !== 200) throw new Error(`netmap: ${res.status} ${text}`);
    // The time to the whole body; counting peers is left outside the measurement.
    return text.length;
  };
  const peersOf = async (token: string) => {
    const res = await fetch(`${url}/v1/node/netmap`, { headers: { authorization: `Bearer ${token}` } });
    return ((await res.json()) as { peers: unknown[] }).peers.length;
  };
  const beat = async (token: string) => {
    const res = await fetch(`${url}/v1/node/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: '{}',
    });
    if (res.status !== 200) throw new Error(`heartbeat: ${res.status} ${await res.text()}`);
    return 0;
  };
  // A policy write moves the netmap epoch: every instance rebuilds its peer map on the next netmap.
  const reapply = (fleet: Fleet) => async () => {
    const res = await fetch(`${url}/v1/acl`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${fleet.apiKey}`, 'content-type': 'application/hujson' },
      body: policy,
    });
    if (res.status !== 200) throw new Error(`PUT /v1/acl: ${res.status} ${await res.text()}`);
  };
  const withPeers = async (timing: Timing, token: string) => ({ ...timing, peers: await peersOf(token) });

  const rows: Row[] = [];
  for (const [label, pick, times] of [
    ['netmap, selective device', (f: Fleet) => f.selective, 400],
    ['netmap, broad device', (f: Fleet) => f.broad, 300],
    ['netmap, device that sees all', (f: Fleet) => f.everyone, 100],
  ] as const) {
    const { base, full } = fleets;
    rows.push({
      label,
      base: await withPeers(await measure(() => getNetmap(pick(base)), times), pick(base)),
      full: await withPeers(await measure(() => getNetmap(pick(full)), times), pick(full)),
    });
  }
  rows.push({
    label: 'netmap, broad, after a policy PUT',
    base: await withPeers(
      await measure(() => getNetmap(fleets.base.broad), 30, reapply(fleets.base)),
      fleets.base.broad,
    ),
    full: await withPeers(
      await measure(() => getNetmap(fleets.full.broad), 30, reapply(fleets.full)),
      fleets.full.broad,
    ),
  });
  rows.push({
    label: 'netmap, broad, after a tag change',
    base: await withPeers(
      await measure(() => getNetmap(fleets.base.broad), 30, retag(url, fleets.base)),
      fleets.base.broad,
    ),
    full: await withPeers(
      await measure(() => getNetmap(fleets.full.broad), 30, retag(url, fleets.full)),
      fleets.full.broad,
    ),
  });
  rows.push({
    label: 'heartbeat, broad device',
    base: await measure(() => beat(fleets.base.broad), 300),
    full: await measure(() => beat(fleets.full.broad), 300),
  });
  // A peer going offline or coming back changes the view of every device that sees it: in a
  // full mesh, every device's. What does the next heartbeat of one of them cost?
  const flip = (fleet: Fleet) => {
    let online = true;
    return async () => {
      const res = await fetch(`${url}/v1/node/${online ? 'disconnect' : 'heartbeat'}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${fleet.flipper}`,
          ...(online ? {} : { 'content-type': 'application/json' }),
        },
        body: online ? undefined : '{}',
      });
      if (!res.ok) throw new Error(`flip: ${res.status}`);
      online = !online;
    };
  };
  // The first heartbeat after a flip also re-reads the network's presence, once for everyone;
  // the next device's heartbeat is what each of the others costs.
  rows.push({
    label: 'heartbeat, sees all, 1st after flip',
    base: await measure(() => beat(fleets.base.everyone), 100, flip(fleets.base)),
    full: await measure(() => beat(fleets.full.everyone), 100, flip(fleets.full)),
  });
  const flipThenBeat = (fleet: Fleet) => {
    const toggle = flip(fleet);
    return async () => {
      await toggle();
      await beat(fleet.everyone);
    };
  };
  rows.push({
    label: 'heartbeat, sees all, 2nd after flip',
    base: await measure(() => beat(fleets.base.everyoneToo), 100, flipThenBeat(fleets.base)),
    full: await measure(() => beat(fleets.full.everyoneToo), 100, flipThenBeat(fleets.full)),
  });
  // What a device that is up to date costs: the agent's poll with the version it holds.
  const unchanged = async (token: string) => {
    const etag = (await fetch(`${url}/v1/node/netmap`, { headers: { authorization: `Bearer ${token}` } })).headers.get(
      'etag',
    )!;
    return async () => {
      const res = await fetch(`${url}/v1/node/netmap`, {
        headers: { authorization: `Bearer ${token}`, 'if-none-match': etag },
      });
      if (res.status !== 304) throw new Error(`conditional netmap: ${res.status}`);
      return 0;
    };
  };
  rows.push({
    label: 'netmap 304, broad device',
    base: await measure(await unchanged(fleets.base.broad), 300),
    full: await measure(await unchanged(fleets.full.broad), 300),
  });
  // After a peer's presence flipped, a device that sees all fetches its netmap: whole, or as
  // a delta since the version it holds (?delta=true). `peers` holds the bytes received.
  const afterFlip = (fleet: Fleet, delta: boolean) => {
    const toggle = flip(fleet);
    // The version held, set by `before` for the measured call (warm-up calls go without).
    let held: string | undefined;
    return {
      before: async () => {
        const res = await fetch(`${url}/v1/node/netmap`, { headers: { authorization: `Bearer ${fleet.everyone}` } });
        held = res.headers.get('etag')!;
        await res.text();
        await toggle();
      },
      run: async () => {
        const res = await fetch(`${url}/v1/node/netmap${delta ? '?delta=true' : ''}`, {
          headers: { authorization: `Bearer ${fleet.everyone}`, ...(held ? { 'if-none-match': held } : {}) },
        });
        const text = await res.text();
        if (res.status !== 200 || (delta && held && !text.includes('"since"'))) {
          throw new Error(`netmap after flip: ${res.status}, ${delta && held ? 'no delta' : ''}`);
        }
        held = undefined;
        return text.length;
      },
    };
  };
  for (const delta of [false, true]) {
    const base = afterFlip(fleets.base, delta);
    const full = afterFlip(fleets.full, delta);
    rows.push({
      label: `netmap ${delta ? 'delta' : 'whole'}, sees all, after flip`,
      base: await measure(base.run, 30, base.before),
      full: await measure(full.run, 30, full.before),
      bytes: true,
    });
  }
  return rows;
}

if (!isMainThread) {
  client(workerData as Job).then(
    (rows) => parentPort!.postMessage({ rows }),
    (error) => parentPort!.postMessage({ error: String(error?.stack ?? error) }),
  );
} else {
  const { values: flags } = parseArgs({
    options: { count: { type: 'string', default: '10000' }, baseline: { type: 'string', default: '1000' } },
  });
  const count = Number(flags.count);
  const baseline = Number(flags.baseline);
  if (!(count > baseline && baseline >= 100)) throw new Error('need --count > --baseline >= 100');

  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-netmap-'));
  const storage = await openStorage(`sqlite:${join(dir, 'warren.db')}`);
  const now = Date.now();
  const clock = { now: () => now };
  const setupStarted = performance.now();
  const fleets = { base: await populate(storage.db, baseline, now), full: await populate(storage.db, count, now) };
  const app = await buildApp({ storage, clock, settings: { apiRateLimit: 1_000_000, deviceRateLimit: 1_000_000 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const text = policy();
  const rules = (text.match(/"action"/g) ?? []).length;
  for (const fleet of Object.values(fleets)) {
    const res = await fetch(`${url}/v1/acl`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${fleet.apiKey}`, 'content-type': 'application/hujson' },
      body: text,
    });
    if (res.status !== 200) throw new Error(`PUT /v1/acl: ${res.status} ${await res.text()}`);
  }
  console.log(
    `netmap benchmark: ${fmt(count)} devices (baseline ${fmt(baseline)}), a policy of ${rules} rules, ` +
      `set up in ${fmt((performance.now() - setupStarted) / 1000, 1)} s on SQLite ${dir}`,
  );

  // The worker loads this file through tsx, as bin/warren.js does.
  const boot = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const job: Job = { url, fleets, policy: text };
  const worker = new Worker(boot, { eval: true, workerData: job });
  const rows = await new Promise<Row[]>((resolve, reject) => {
    worker.on('message', (m: { rows: Row[] } | { error: string }) =>
      'error' in m ? reject(new Error(m.error)) : resolve(m.rows),
    );
    worker.on('error', reject);
  });
  await worker.terminate();

  console.log('');
  for (const { label, base, full, bytes } of rows) {
    const peers =
      base.peers || full.peers ? ` (${fmt(base.peers)} → ${fmt(full.peers)} ${bytes ? 'bytes' : 'peers'})` : '';
    console.log(
      `${label.padEnd(34)} ${fmt(baseline).padStart(6)}: p50 ${fmt(base.p50, 2).padStart(6)} ms, p95 ${fmt(base.p95, 2).padStart(6)} ms | ` +
        `${fmt(count).padStart(6)}: p50 ${fmt(full.p50, 2).padStart(6)} ms, p95 ${fmt(full.p95, 2).padStart(6)} ms | ` +
        `ratio ${fmt(full.p50 / base.p50, 2)}${peers}`,
    );
  }
  const [whole, delta] = rows.slice(-2).map((row) => row.full);
  console.log(
    `\nafter a presence change at ${fmt(count)} devices, a device that sees all receives ${fmt(delta!.peers)} bytes ` +
      `as a delta instead of ${fmt(whole!.peers)} (ratio ${fmt(delta!.peers / whole!.peers, 4)}), ` +
      `in p50 ${fmt(delta!.p50, 2)} ms instead of ${fmt(whole!.p50, 2)} ms (ratio ${fmt(delta!.p50 / whole!.p50, 2)})`,
  );
  // Warm each view once, then patch it, then rebuild it, for the same kind of change.
  for (const fleet of Object.values(fleets))
    await networkView(storage.db, fleet.networkId, (await netmapHead(storage.db, fleet.networkId))!);
  const update = {
    patched: {
      base: await viewUpdate(storage.db, url, fleets.base, false, 50),
      full: await viewUpdate(storage.db, url, fleets.full, false, 50),
    },
    rebuilt: {
      base: await viewUpdate(storage.db, url, fleets.base, true, 20),
      full: await viewUpdate(storage.db, url, fleets.full, true, 20),
    },
  };
  console.log('');
  for (const [label, { base, full }] of Object.entries(update)) {
    console.log(
      `${`view after a tag change, ${label}`.padEnd(34)} ${fmt(baseline).padStart(6)}: p50 ${fmt(base.p50, 2).padStart(6)} ms, p95 ${fmt(base.p95, 2).padStart(6)} ms | ` +
        `${fmt(count).padStart(6)}: p50 ${fmt(full.p50, 2).padStart(6)} ms, p95 ${fmt(full.p95, 2).padStart(6)} ms | ` +
        `ratio ${fmt(full.p50 / base.p50, 2)}`,
    );
  }
  const patchedP50 = update.patched.full.p50;
  console.log(
    `\none device's tag change at ${fmt(count)} devices: the view is patched in p50 ${fmt(patchedP50, 2)} ms of server time ` +
      `instead of rebuilt in p50 ${fmt(update.rebuilt.full.p50, 2)} ms (ratio ${fmt(patchedP50 / update.rebuilt.full.p50, 3)}); ` +
      `target p50 < 5 ms: ${patchedP50 < 5 ? 'met' : 'MISSED'}`,
  );
  const [selective, broad] = [rows[0]!.full, rows[1]!.full];
  console.log('');
  for (const [what, t] of [
    ['selective', selective],
    ['broad', broad],
  ] as const) {
    console.log(
      `GET /v1/node/netmap at ${fmt(count)} devices, ${what} device (${fmt(t.peers)} peers): p50 ${fmt(t.p50, 2)} ms; ` +
        `target p50 < 10 ms: ${t.p50 < 10 ? 'met' : 'MISSED'}`,
    );
  }
  await app.close();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
}

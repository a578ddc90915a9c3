/**
 * Registrations racing on two instances over one database: each instance has its own pool, so on
 * PostgreSQL the only thing that keeps addresses, names and a single-use key's one use apart is
 * what the enrollment's transaction locks. Every device must come out with its own address and
 * name, the address counter must have no gap (a re-enrollment takes none), and every enrollment
 * must leave its audit entry and events.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { json, type SecondInstance, secondInstance, startServer, type TestServer } from '../../harness.js';
import { type ControlClient, controlClient, nodeKey, registerWithKey } from './ts-client.js';

let server: TestServer;
let other: SecondInstance;
const clients: ControlClient[] = [];

beforeEach(async () => {
  server = await startServer();
  other = await secondInstance(server);
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await other.close();
  await server.close();
});

async function authKey(body: Record<string, unknown>): Promise<{ id: string; key: string }> {
  const res = await server.call('POST', '/v1/keys', { body: { type: 'auth', ...body } });
  expect(res.status).toBe(201);
  return json(res);
}

async function client(url: string): Promise<ControlClient> {
  const c = await controlClient(url);
  clients.push(c);
  return c;
}

it('gives devices registering at once on two instances unique addresses and names, each enrollment audited', {
  timeout: 60_000,
}, async () => {
  const reusable = await authKey({ reusable: true });
  const single = await authKey({});
  const urls = [server.url, other.url];

  // A device enrolled before the burst logs in again during it (tailscale up --force-reauth
  // --auth-key: a new node key, the old one as OldNodeKey): it keeps its address, and the index
  // the enrollment took on the way is given back.
  const returning = await client(other.url);
  const first = await registerWithKey(returning, reusable.key, 'node');
  expect(first.answer).toMatchObject({ MachineAuthorized: true });
  const renewed = nodeKey();
  const again = (old: string) =>
    returning.post('/machine/register', {
      NodeKey: renewed,
      OldNodeKey: old,
      Auth: { AuthKey: reusable.key },
      Hostinfo: { Hostname: 'node', OS: 'linux' },
    });

  const fresh = 16;
  const machines = await Promise.all(Array.from({ length: fresh + 4 }, (_, i) => client(urls[i % 2]!)));
  const [reEnrolled, ...answers] = await Promise.all([
    again(first.nodeKey),
    // The same hostname everywhere, so the names collide as much as they can.
    ...machines.slice(0, fresh).map((m) => registerWithKey(m, reusable.key, 'node')),
    // A single-use key raced on both instances: one use, one device.
    ...machines.slice(fresh).map((m) => registerWithKey(m, single.key, 'once')),
  ]);
  expect(JSON.parse(reEnrolled!.body.toString())).toMatchObject({ MachineAuthorized: true });
  const burst = answers as Awaited<ReturnType<typeof registerWithKey>>[];
  for (const a of burst.slice(0, fresh)) expect(a.answer).toMatchObject({ MachineAuthorized: true });
  const onceAnswers = burst.slice(fresh).map((a) => a.answer);
  expect(onceAnswers.filter((a) => a.MachineAuthorized === true)).toHaveLength(1);
  expect(onceAnswers.filter((a) => typeof a.Error === 'string')).toHaveLength(3);

  const db = server.database.storage.db;
  const devices = await db.selectFrom('devices').select(['id', 'name', 'addr_index', 'node_key']).execute();
  const total = 1 + fresh + 1;
  expect(devices).toHaveLength(total);
  // Unique, and with no gap: 1..total, the re-enrolled device keeping index 1.
  expect(devices.map((d) => Number(d.addr_index)).sort((a, b) => a - b)).toEqual(
    Array.from({ length: total }, (_, i) => i + 1),
  );
  expect(Number(devices.find((d) => d.node_key === renewed)?.addr_index)).toBe(1);
  const names = devices.map((d) => d.name);
  expect(new Set(names).size).toBe(total);
  expect(names.filter((n) => n.startsWith('node')).sort()).toEqual(
    ['node', ...Array.from({ length: fresh }, (_, i) => `node-${i + 1}`)].sort(),
  );
  const network = await db.selectFrom('networks').select('next_addr_index').executeTakeFirstOrThrow();
  expect(Number(network.next_addr_index)).toBe(total + 1);

  // One audit entry per enrollment (the re-enrollment included), in commit order per network.
  const audit = await db
    .selectFrom('audit_log')
    .select(['seq', 'device_id'])
    .where('action', '=', 'device.enroll')
    .orderBy('seq')
    .execute();
  expect(audit).toHaveLength(total + 1);
  expect(new Set(audit.map((a) => a.device_id))).toEqual(new Set(devices.map((d) => d.id)));
  const events = await db.selectFrom('events').select(['type', 'data']).orderBy('seq').execute();
  expect(events.filter((e) => e.type === 'device.created')).toHaveLength(total);
  const updated = events.filter((e) => e.type === 'device.updated');
  expect(updated).toHaveLength(1);
  expect(JSON.parse(updated[0]!.data).device.addresses[0]).toBe('100.64.0.1');
  expect(await json(await server.call('GET', `/v1/keys/${reusable.id}`))).toMatchObject({ uses: 1 + fresh + 1 });
  expect(await json(await server.call('GET', `/v1/keys/${single.id}`))).toMatchObject({ uses: 1, state: 'used' });

  // Both instances serve the same devices, each with the address the database holds.
  const listed = await json(await other.get('/v1/devices?fields=all'));
  expect(listed.devices).toHaveLength(total);
  expect(new Set(listed.devices.map((d: { addresses: string[] }) => d.addresses[0])).size).toBe(total);
});

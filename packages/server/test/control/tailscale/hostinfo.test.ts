/**
 * What a Tailscale client reports in its map requests' Hostinfo reaches the device's record and
 * its peers: an upgraded client shows its new version in /v1, a renamed host its hostname, and
 * the peer API ports (Hostinfo.Services) reach peers.
 */
import type { Kysely } from 'kysely';
import { expect, it } from 'vitest';
import * as boundedHostinfo from '../../../src/storage/migrations/028_bounded_hostinfo.js';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';
import { decodeMessages } from './ts-client.js';

const t = protocolFixture();

/** A map request that only reports (no stream, no peers), as tailscaled sends after a change. */
const reportHostinfo = (device: Awaited<ReturnType<typeof t.joined>>, Hostinfo: Record<string, unknown>) =>
  device.client.post('/machine/map', {
    Version: 142,
    NodeKey: device.nodeKey,
    Stream: false,
    OmitPeers: true,
    Hostinfo,
  });

it('an upgraded client’s version, OS and hostname from its map request reach /v1 and its peers', async () => {
  const key = await t.authKey();
  const alpha = await t.joined(key, 'alpha');
  const beta = await t.joined(key, 'beta');
  const services = [{ Proto: 'peerapi4', Port: 45678 }];
  const report = await reportHostinfo(alpha, {
    Hostname: 'alpha-renamed',
    OS: 'windows',
    IPNVersion: '1.104.0-t0123',
    Services: services,
  });
  expect(report.status).toBe(200);
  const list = await json(await t.server.call('GET', '/v1/devices?fields=all'));
  // Named after its hostname, the device follows it (tailscale set --hostname), as in Tailscale.
  const device = list.devices.find((d: { name: string }) => d.name === 'alpha-renamed');
  expect(device).toMatchObject({ clientVersion: '1.104.0-t0123', os: 'windows', hostname: 'alpha-renamed' });

  const map = await beta.client.post('/machine/map', { Version: 142, NodeKey: beta.nodeKey, Stream: false });
  const [full] = decodeMessages(map.body);
  const [peer] = full.Peers as Array<{ Name: string; Hostinfo: Record<string, unknown> }>;
  expect(peer.Hostinfo).toMatchObject({ Hostname: 'alpha-renamed', OS: 'windows', Services: services });
  expect(peer.Name).toBe(`alpha-renamed.${device.dnsName.split('.').slice(1).join('.')}.`);

  // A request without Hostinfo (an endpoint update) changes none of it.
  await alpha.client.post('/machine/map', { Version: 142, NodeKey: alpha.nodeKey, Stream: false, OmitPeers: true });
  const again = await json(await t.server.call('GET', '/v1/devices?fields=all'));
  expect(again.devices.find((d: { name: string }) => d.name === 'alpha-renamed')).toMatchObject({
    clientVersion: '1.104.0-t0123',
    os: 'windows',
  });
});

it('a new hostname renames a device named after the old one, never a name someone gave it', async () => {
  const key = await t.authKey();
  const alpha = await t.joined(key, 'alpha');
  const beta = await t.joined(key, 'beta');
  await t.joined(key, 'web');
  const names = async () =>
    (await json(await t.server.call('GET', '/v1/devices'))).devices.map((d: { name: string }) => d.name).sort();
  // Taken: the device becomes web-1, as an enrollment would name it.
  expect((await reportHostinfo(alpha, { Hostname: 'web.example.com' })).status).toBe(200);
  expect(await names()).toEqual(['beta', 'web', 'web-1']);
  // Named by an admin: the name stays whatever the hostname becomes.
  const betaId = await t.deviceId('beta');
  const renamed = await t.server.call('POST', `/api/v2/device/${betaId}/name`, { body: { name: 'db' } });
  expect(renamed.status).toBe(200);
  expect((await reportHostinfo(beta, { Hostname: 'beta-2' })).status).toBe(200);
  expect(await names()).toEqual(['db', 'web', 'web-1']);
  const audit = await json(await t.server.call('GET', '/v1/logs/audit?limit=1000'));
  const renames = audit.entries.filter((e: { action: string }) => e.action === 'device.rename');
  expect(renames.map((e: { target: string }) => e.target)).toEqual([await t.deviceId('web-1'), betaId]);
});

it('keeps a bounded Hostinfo: a 900 KiB one reaches neither the database nor peers, its normal fields do', async () => {
  const key = await t.authKey();
  const alpha = await t.joined(key, 'alpha');
  const beta = await t.joined(key, 'beta');
  const big = 'x'.repeat(225 << 10); // four of them: 900 KiB, under the 1 MiB body limit
  const services = [{ Proto: 'peerapi4', Port: 45678 }];
  const report = await reportHostinfo(alpha, {
    Hostname: 'alpha',
    OS: 'linux',
    OSVersion: big, // past its bound: dropped, not cut
    IPNVersion: '1.102.5',
    GoArch: 'amd64',
    ShieldsUp: true,
    Services: [...services, { Proto: 'tcp', Port: 22, Description: big }],
    Padding: big, // not a field Warren keeps
    NetInfo: { PreferredDERP: 999, Big: big },
  });
  expect(report.status).toBe(200);

  const row = await t.server.database.storage.db
    .selectFrom('devices')
    .select('hostinfo')
    .where('node_key', '=', alpha.nodeKey)
    .executeTakeFirstOrThrow();
  expect(row.hostinfo?.length).toBeLessThan(1024);
  const stored = JSON.parse(row.hostinfo ?? '{}') as Record<string, unknown>;
  expect(stored).toEqual({
    Hostname: 'alpha',
    OS: 'linux',
    IPNVersion: '1.102.5',
    GoArch: 'amd64',
    ShieldsUp: true,
    Services: [...services, { Proto: 'tcp', Port: 22 }],
  });

  const map = await beta.client.post('/machine/map', { Version: 142, NodeKey: beta.nodeKey, Stream: false });
  expect(map.body.length).toBeLessThan(64 << 10);
  const [full] = decodeMessages(map.body);
  const [peer] = full.Peers as Array<{ Hostinfo: Record<string, unknown> }>;
  expect(peer.Hostinfo).toMatchObject({ Hostname: 'alpha', OS: 'linux', GoArch: 'amd64', Services: stored.Services });
  expect(peer.Hostinfo).not.toHaveProperty('OSVersion');
  expect(peer.Hostinfo).not.toHaveProperty('Padding');
});

it('bounds a Hostinfo stored before map requests were bounded (migration 028): peers get the bounded one', async () => {
  const key = await t.authKey();
  const alpha = await t.joined(key, 'alpha');
  const gamma = await t.joined(key, 'gamma');
  const { db } = t.server.database.storage;
  const big = 'x'.repeat(225 << 10);
  const services = [{ Proto: 'peerapi4', Port: 45678 }];
  // As versions before the bounds stored a client's Hostinfo: whole, written straight to the row.
  const old = {
    Hostname: 'alpha',
    OS: 'linux',
    OSVersion: big,
    IPNVersion: '1.80.0',
    Services: [...services, { Proto: 'tcp', Port: 22, Description: big }],
    Padding: big,
    NetInfo: { PreferredDERP: 1, Big: big },
  };
  await db
    .updateTable('devices')
    .set({ hostinfo: JSON.stringify(old) })
    .where('node_key', '=', alpha.nodeKey)
    .execute();
  await db.updateTable('devices').set({ hostinfo: '[1, 2' }).where('node_key', '=', gamma.nodeKey).execute();
  // Run directly: the runner will not run it again on a database that has applied it already.
  await boundedHostinfo.up(db as unknown as Kysely<unknown>);

  const stored = async (nodeKey: string) =>
    (await db.selectFrom('devices').select('hostinfo').where('node_key', '=', nodeKey).executeTakeFirstOrThrow())
      .hostinfo;
  const bounded = {
    Hostname: 'alpha',
    OS: 'linux',
    IPNVersion: '1.80.0',
    Services: [...services, { Proto: 'tcp', Port: 22 }],
  };
  expect(JSON.parse((await stored(alpha.nodeKey)) ?? 'null')).toEqual(bounded);
  expect(await stored(gamma.nodeKey)).toBeNull();

  const beta = await t.joined(key, 'beta');
  const map = await beta.client.post('/machine/map', { Version: 142, NodeKey: beta.nodeKey, Stream: false });
  expect(map.body.length).toBeLessThan(64 << 10);
  const [full] = decodeMessages(map.body);
  const peer = (full.Peers as Array<{ Name: string; Hostinfo: Record<string, unknown> }>).find((p) =>
    p.Name.startsWith('alpha.'),
  );
  expect(peer?.Hostinfo).toEqual(bounded);

  // Running it again changes nothing, and it is among the migrations every database runs.
  await boundedHostinfo.up(db as unknown as Kysely<unknown>);
  expect(JSON.parse((await stored(alpha.nodeKey)) ?? 'null')).toEqual(bounded);
  const applied = await db
    .selectFrom('kysely_migration' as never)
    .select('name' as never)
    .execute();
  expect(applied.map((row) => (row as { name: string }).name)).toContain('028_bounded_hostinfo');
});

it('takes the routes it may serve from a map request and leaves out the rest, keeping the device connected', async () => {
  const key = await t.authKey();
  const router = await t.joined(key, 'edge-router');
  const advertised = async () =>
    (await json(await t.server.call('GET', '/v1/routes'))).routes
      .filter((r: { deviceName: string; advertised: boolean }) => r.deviceName === 'edge-router' && r.advertised)
      .map((r: { prefix: string }) => r.prefix)
      .sort();
  // A range over the mesh's own addresses, a lone default route and text that is no prefix:
  // /v1/node/* refuses each, but a refused map request would leave tailscaled without a netmap.
  const report = await reportHostinfo(router, {
    Hostname: 'edge-router',
    RoutableIPs: ['10.1.0.0/24', '100.64.5.0/24', '0.0.0.0/0', 'nonsense', '10.1.0.0/24'],
  });
  expect(report.status).toBe(200);
  expect(await advertised()).toEqual(['10.1.0.0/24']);
  // Its map stream still opens, and an exit node's pair is taken whole.
  const map = await router.client.post('/machine/map', { Version: 142, NodeKey: router.nodeKey, Stream: false });
  expect(map.status).toBe(200);
  expect(decodeMessages(map.body)[0].Node).toBeDefined();
  await reportHostinfo(router, { Hostname: 'edge-router', RoutableIPs: ['::/0', '0.0.0.0/0', '10.1.0.0/24'] });
  expect(await advertised()).toEqual(['0.0.0.0/0', '10.1.0.0/24', '::/0']);
});

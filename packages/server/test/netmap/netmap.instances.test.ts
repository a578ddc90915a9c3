/**
 * Several instances share one database and nothing else: a change another instance makes is
 * visible here only through the database. These tests make such changes straight in the
 * database — as another instance's transaction would — and expect this instance's cached
 * policy, peer map and presence to follow at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/lib/ids.js';
import { bumpNetmapEpoch, bumpPresenceEpoch } from '../../src/modules/network/epochs.js';
import { policyEtag } from '../../src/policy/etag.js';
import { applyPolicy, policyDefining, policyText } from '../acl/helpers.js';
import { nodeCall } from '../devices/helpers.js';
import { startServer, type TestServer } from '../harness.js';
import { createUser, type Devices, enrollAll, netmap, peerNames } from './helpers.js';

describe('caches follow changes made by other instances', () => {
  let server: TestServer;
  let d: Devices;
  const db = () => server.database.storage.db;
  beforeAll(async () => {
    server = await startServer();
    await createUser(server, 'ana@example.com');
    await applyPolicy(server, policyDefining(['tag:web']));
    d = await enrollAll(server, {
      'ana-1': { user: 'ana@example.com' },
      'ana-2': { user: 'ana@example.com' },
      web: { tags: ['tag:web'] },
    });
    // Warm every cache.
    for (const device of Object.values(d)) await netmap(server, device.nodeToken);
  });
  afterAll(() => server.close());

  it('serves and applies a policy version stored elsewhere', async () => {
    const text = `{
      "tagOwners": { "tag:web": ["autogroup:admin"] },
      "acls": [{ "action": "accept", "src": ["ana@example.com"], "dst": ["tag:web:443"] }],
    }`;
    const { versions } = (await (await server.call('GET', '/v1/acl/history')).json()) as { versions: any[] };
    await db()
      .transaction()
      .execute(async (trx) => {
        await bumpNetmapEpoch(trx, server.networkId);
        await trx
          .insertInto('policies')
          .values({
            id: newId('policy'),
            network_id: server.networkId,
            version: versions[0].version + 1,
            text,
            etag: policyEtag(text),
            created_at: server.clock.now(),
            created_by: 'elsewhere',
          })
          .execute();
      });
    expect(await policyText(server)).toEqual({ text, etag: policyEtag(text) });
    // ana's devices no longer see each other (no autogroup:self rule), only the web server.
    expect(await peerNames(server, d['ana-1'])).toEqual(['web']);
    expect(await peerNames(server, d.web)).toEqual(['ana-1', 'ana-2']);
  });

  it('follows a tag change stored elsewhere', async () => {
    const id = d['ana-2'].device.id;
    await db()
      .transaction()
      .execute(async (trx) => {
        await bumpNetmapEpoch(trx, server.networkId);
        await trx.updateTable('devices').set({ tags: '["tag:web"]' }).where('id', '=', id).execute();
        await trx
          .insertInto('device_tags')
          .values({ network_id: server.networkId, tag: 'tag:web', device_id: id })
          .execute();
      });
    expect(await peerNames(server, d['ana-1'])).toEqual(['ana-2', 'web']);
  });

  it('follows presence another instance writes: the device row, then the presence epoch', async () => {
    await db().updateTable('devices').set({ disconnected: 1 }).where('id', '=', d.web.device.id).execute();
    await bumpPresenceEpoch(db(), server.networkId);
    const peers = (await netmap(server, d['ana-1'].nodeToken)).body.peers;
    expect(peers.find((p: any) => p.name === 'web').online).toBe(false);
    expect(peers.find((p: any) => p.name === 'ana-2').online).toBe(true);
  });

  it('follows a device timing out, which nobody writes', async () => {
    expect((await nodeCall(server, d.web.nodeToken, 'heartbeat')).status).toBe(200);
    const online = async (name: string) =>
      (await netmap(server, d['ana-1'].nodeToken)).body.peers.find((p: any) => p.name === name).online;
    expect(await online('web')).toBe(true);
    server.clock.advance(40_000);
    expect((await nodeCall(server, d['ana-2'].nodeToken, 'heartbeat')).status).toBe(200);
    expect(await online('web')).toBe(true);
    // 60 s after web's last heartbeat, with only ana-2 beating since.
    server.clock.advance(20_000);
    expect(await online('web')).toBe(false);
    expect(await online('ana-2')).toBe(true);
  });
});

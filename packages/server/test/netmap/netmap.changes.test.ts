/**
 * The netmap change log, with two instances on one database (run with
 * WARREN_TEST_BACKEND=postgres for the case that matters): a device change made through one
 * instance reaches the other's netmaps by patching its view, not rebuilding it; a policy
 * change carries the view to the new policy; what the log does not cover (a role change, an
 * epoch moved without a row, a pruned log) is rebuilt; and a row is written exactly when the
 * change commits.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { forgetViews, networkView, viewStats } from '../../src/modules/netmap/netmap.cache.js';
import { netmapHead, servedRoutes } from '../../src/modules/netmap/netmap.repository.js';
import { primariesOf } from '../../src/modules/netmap/netmap-primaries.js';
import { KEPT_EPOCHS } from '../../src/modules/network/epoch-log.js';
import { bumpNetmapEpoch } from '../../src/modules/network/epochs.js';
import { netmapChanges } from '../../src/modules/network/netmap-changes.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { applyPolicy, policyDefining } from '../acl/helpers.js';
import { expectProblem, netmapEpoch } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { createUser, type Devices, enrollAll } from './helpers.js';

const POLICY = `{
  "tagOwners": { "tag:web": ["autogroup:admin"], "tag:db": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["ana@example.com"], "dst": ["tag:web:443"] },
    { "action": "accept", "src": ["tag:web"], "dst": ["tag:db:5432"] },
  ],
}`;

describe('netmap change log with two instances', () => {
  let a: TestServer;
  let b: FastifyInstance;
  let bStorage: Storage;
  let bUrl: string;
  let d: Devices;

  /** A device's netmap served by instance B. */
  const netmapOnB = async (name: string) => {
    const res = await fetch(`${bUrl}/v1/node/netmap`, { headers: { authorization: `Bearer ${d[name].nodeToken}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as { version: number; peers: { name: string; tags: string[] }[] };
  };
  const peersOnB = async (name: string) => (await netmapOnB(name)).peers.map((p) => p.name).sort();
  /** What B's next netmap request does to its view: loads it, patches it, or neither. */
  const viewWork = async (run: () => Promise<unknown>) => {
    const before = { ...viewStats };
    await run();
    return {
      loads: viewStats.loads - before.loads,
      patches: viewStats.patches - before.patches,
      policies: viewStats.policies - before.policies,
    };
  };
  /** Every device's netmap on B as it is, then from a view B loads from scratch. */
  const keptAndRebuilt = async () => {
    const kept = await Promise.all(Object.keys(d).map(netmapOnB));
    forgetViews(bStorage.db);
    return { kept, rebuilt: await Promise.all(Object.keys(d).map(netmapOnB)) };
  };
  const retag = async (name: string, tags: string[]) => {
    const res = await a.call('POST', `/v1/devices/${d[name].device.id}/tags`, { body: { tags } });
    expect(res.status, await res.text()).toBe(200);
  };

  beforeAll(async () => {
    a = await startServer();
    const { url, schema } = a.database;
    bStorage = await openStorage(url, schema ? { schema, poolSize: 5 } : {});
    b = await buildApp({ storage: bStorage, clock: a.clock, settings: { apiRateLimit: 100_000 } });
    await b.listen({ host: '127.0.0.1', port: 0 });
    const address = b.server.address();
    bUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    await createUser(a, 'ana@example.com');
    await applyPolicy(a, POLICY);
    d = await enrollAll(a, {
      ana: { user: 'ana@example.com' },
      web: { tags: ['tag:web'] },
      db: { tags: ['tag:db'] },
      spare: { tags: ['tag:db'] },
    });
  });
  afterAll(async () => {
    await b.close();
    await bStorage.close();
    await a.close();
  });

  it("patches B's view with a tag change made through A, as a rebuild would serve it", async () => {
    expect(await peersOnB('ana')).toEqual(['web']);
    expect(await peersOnB('web')).toEqual(['ana', 'db', 'spare']);

    await retag('spare', ['tag:web']);
    const work = await viewWork(async () => {
      expect(await peersOnB('ana')).toEqual(['spare', 'web']);
    });
    expect(work).toEqual({ loads: 0, patches: 1, policies: 0 });
    expect(await peersOnB('web')).toEqual(['ana', 'db']);
    expect(await peersOnB('spare')).toEqual(['ana', 'db']);

    // The same maps, at the same versions, from a view B loads from scratch.
    const { kept, rebuilt } = await keptAndRebuilt();
    expect(rebuilt).toEqual(kept);
  });

  it('serves a call whose head predates the held view from that view, loading nothing', async () => {
    // Concurrent calls finish in any order: one that read the head before another moved the
    // view on must not take the view back to its own head (a whole load, then one forward).
    const db = bStorage.db;
    const stale = (await netmapHead(db, a.networkId))!;
    await retag('spare', ['tag:db']);
    await retag('spare', ['tag:web']);
    const current = (await netmapHead(db, a.networkId))!;
    expect(current.epoch).toBeGreaterThan(stale.epoch);
    const held = await networkView(db, a.networkId, current);
    const work = await viewWork(async () => {
      expect(await networkView(db, a.networkId, stale)).toBe(held);
      expect(await networkView(db, a.networkId, current)).toBe(held);
    });
    expect(work).toEqual({ loads: 0, patches: 0, policies: 0 });
  });

  it('patches enrollment and deletion made through A', async () => {
    const more = await enrollAll(a, { web2: { tags: ['tag:web'] } });
    d.web2 = more.web2;
    expect(await viewWork(async () => expect(await peersOnB('ana')).toEqual(['spare', 'web', 'web2']))).toEqual({
      loads: 0,
      patches: 1,
      policies: 0,
    });
    expect((await a.call('DELETE', `/v1/devices/${d.web2.device.id}`)).status).toBe(204);
    delete d.web2;
    expect(await viewWork(async () => expect(await peersOnB('ana')).toEqual(['spare', 'web']))).toEqual({
      loads: 0,
      patches: 1,
      policies: 0,
    });
  });

  it('carries the view to a policy of another meaning, serving what a rebuild serves', async () => {
    await peersOnB('ana');
    await applyPolicy(a, policyDefining(['tag:web', 'tag:db']));
    const work = await viewWork(() => peersOnB('ana'));
    expect(work).toEqual({ loads: 0, patches: 1, policies: 1 });
    const { kept, rebuilt } = await keptAndRebuilt();
    expect(kept).toEqual(rebuilt);
    await applyPolicy(a, POLICY);
    expect(await viewWork(() => peersOnB('ana'))).toEqual({ loads: 0, patches: 1, policies: 1 });
  });

  it('keeps the peer map for a policy that changes only ports, with the new policy for filters', async () => {
    const db = bStorage.db;
    const viewAt = async () => networkView(db, a.networkId, (await netmapHead(db, a.networkId))!);
    const primaries = primariesOf(await servedRoutes(db, a.networkId, a.clock.now()));
    await peersOnB('web');
    const before = await viewAt();
    await applyPolicy(a, POLICY.replace('tag:db:5432', 'tag:db:5433'));
    const work = await viewWork(() => peersOnB('web'));
    expect(work).toEqual({ loads: 0, patches: 1, policies: 1 });
    const after = await viewAt();
    expect(after).not.toBe(before);
    // Who sees whom is the same: the peer map made under the old policy answers for the new.
    expect(after.peersFor(primaries)).toBe(before.peersFor(primaries));
    expect(JSON.stringify(after.compiledPolicy.rules.map((r) => r.dst))).toContain('5433');
    expect(JSON.stringify(before.compiledPolicy.rules.map((r) => r.dst))).not.toContain('5433');
    const { kept, rebuilt } = await keptAndRebuilt();
    expect(kept).toEqual(rebuilt);

    // Back to 5432, and the tag:db rule gone: who sees whom moved, so the map is made anew.
    await applyPolicy(a, POLICY);
    await peersOnB('web');
    const held = await viewAt();
    await applyPolicy(a, POLICY.replace(/\{ "action": "accept", "src": \["tag:web"\][^}]*\},/, ''));
    expect(await viewWork(async () => expect(await peersOnB('web')).toEqual(['ana']))).toEqual({
      loads: 0,
      patches: 1,
      policies: 1,
    });
    expect((await viewAt()).peersFor(primaries)).not.toBe(held.peersFor(primaries));
    const again = await keptAndRebuilt();
    expect(again.kept).toEqual(again.rebuilt);
    await applyPolicy(a, POLICY);
  });

  it('rebuilds after a role change, or an epoch the log does not name', async () => {
    await peersOnB('ana');

    const { users } = await json(await a.call('GET', '/v1/users'));
    const ana = users.find((u: { loginName: string }) => u.loginName === 'ana@example.com');
    expect((await a.call('PATCH', `/v1/users/${ana.id}`, { body: { role: 'admin' } })).status).toBe(200);
    const work = await viewWork(async () => expect(await peersOnB('web')).toEqual(['ana', 'db']));
    expect(work).toEqual({ loads: 1, patches: 0, policies: 0 });

    await bumpNetmapEpoch(a.database.storage.db, a.networkId);
    expect(await viewWork(() => peersOnB('ana'))).toEqual({ loads: 1, patches: 0, policies: 0 });
  });

  it("carries B's view over a policy of the same meaning, and to one that changes it", async () => {
    const peersBefore = await peersOnB('web');
    expect(peersBefore).toContain('db');
    const versionBefore = (await netmapOnB('web')).version;
    // Comments and layout only: no netmap changes, so B keeps its view and each device's version.
    await applyPolicy(a, `// reviewed\n${POLICY.replaceAll('  ', '    ')}`);
    const kept = await viewWork(async () => expect(await peersOnB('web')).toEqual(peersBefore));
    expect(kept).toEqual({ loads: 0, patches: 1, policies: 0 });
    expect((await netmapOnB('web')).version).toBe(versionBefore);
    // The rule from tag:web to tag:db removed: the view takes the new policy, and the netmap shows it.
    await applyPolicy(a, POLICY.replace(/\{ "action": "accept", "src": \["tag:web"\][^}]*\},/, ''));
    const carried = await viewWork(async () => expect(await peersOnB('web')).not.toContain('db'));
    expect(carried).toEqual({ loads: 0, patches: 1, policies: 1 });
    expect((await netmapOnB('web')).version).toBeGreaterThan(versionBefore);
    await applyPolicy(a, POLICY);
    expect(await peersOnB('web')).toEqual(peersBefore);
  });

  it('writes the log with the change that commits, and nothing for one refused', async () => {
    const before = await netmapChanges(a.database.storage.db, a.networkId);
    const res = await a.call('POST', '/v1/devices/device_doesnotexist0000000000/tags', { body: { tags: ['tag:db'] } });
    expect(res.status).toBe(404);
    expect(await netmapChanges(a.database.storage.db, a.networkId)).toEqual(before);

    await retag('spare', ['tag:db']);
    const after = await netmapChanges(a.database.storage.db, a.networkId);
    expect(after.slice(before.length)).toEqual([{ epoch: await netmapEpoch(a), deviceId: d.spare.device.id }]);
  });

  it('prunes old epochs, and a view older than the log is rebuilt', async () => {
    await peersOnB('ana');
    const db = a.database.storage.db;
    // Jump the epoch so that the next change lands on a pruning epoch past everything logged.
    const next = Math.ceil(((await netmapEpoch(a)) + KEPT_EPOCHS + 1) / 64) * 64;
    await db
      .updateTable('networks')
      .set({ netmap_epoch: next - 1 })
      .where('id', '=', a.networkId)
      .execute();
    await retag('spare', ['tag:web']);
    expect(await netmapChanges(db, a.networkId)).toEqual([{ epoch: next, deviceId: d.spare.device.id }]);
    const work = await viewWork(async () => expect(await peersOnB('ana')).toEqual(['spare', 'web']));
    expect(work).toEqual({ loads: 1, patches: 0, policies: 0 });
  });

  it('refuses a bad tag change without logging it', async () => {
    const before = await netmapChanges(a.database.storage.db, a.networkId);
    await expectProblem(
      await a.call('POST', `/v1/devices/${d.spare.device.id}/tags`, { body: { tags: ['tag:nope'] } }),
      400,
      'invalid_tag',
    );
    expect(await netmapChanges(a.database.storage.db, a.networkId)).toEqual(before);
  });

  it('does not reuse the class of a user removed and created again with another role', async () => {
    await applyPolicy(
      a,
      `{
      "tagOwners": { "tag:web": ["autogroup:admin"], "tag:db": ["autogroup:admin"] },
      "acls": [{ "action": "accept", "src": ["autogroup:admin"], "dst": ["*:*"] }],
    }`,
    );
    const admin = await createUser(a, 'cy@example.com', 'admin');
    Object.assign(d, await enrollAll(a, { 'cy-1': { user: 'cy@example.com' } }));
    expect(await peersOnB('cy-1')).toEqual(['ana', 'db', 'spare', 'web']);
    expect((await a.call('DELETE', `/v1/users/${admin}`)).status).toBe(204);
    delete d['cy-1'];
    await peersOnB('ana');
    await createUser(a, 'cy@example.com', 'member');
    Object.assign(d, await enrollAll(a, { 'cy-2': { user: 'cy@example.com' } }));
    // A member: only ana, an admin since the role change above, reaches it.
    const work = await viewWork(async () => expect(await peersOnB('cy-2')).toEqual(['ana']));
    expect(work).toEqual({ loads: 1, patches: 0, policies: 0 });
  });
});

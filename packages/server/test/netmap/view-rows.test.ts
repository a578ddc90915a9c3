/**
 * What a heartbeat or netmap reads before any cache (netmap.repository.ts viewRows): on
 * PostgreSQL one statement with the lists as JSON, on SQLite the queries one by one. Either
 * way it must hold exactly what the separate queries read, values and their types included:
 * the device's own record is hashed into its netmap version and shown in its netmap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routesOfDevice } from '../../src/modules/devices/devices.repository.js';
import { netmapHead, selfRow, servedRoutes, viewRows } from '../../src/modules/netmap/netmap.repository.js';
import { applyPolicy } from '../acl/helpers.js';
import { nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { createUser, type Devices, enrollAll } from './helpers.js';

describe('the rows behind a netmap', () => {
  let server: TestServer;
  let d: Devices;
  beforeAll(async () => {
    server = await startServer();
    await createUser(server, 'ana@example.com');
    await applyPolicy(
      server,
      `{ "tagOwners": { "tag:gw": ["autogroup:admin"] }, "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:443"] }] }`,
    );
    d = await enrollAll(server, {
      ana: { user: 'ana@example.com' },
      // Two routers of one prefix (one primary), a route left unapproved, and an exit node.
      gw1: { tags: ['tag:gw'], advertiseRoutes: ['10.0.0.0/24', '10.9.0.0/16'] },
      gw2: { tags: ['tag:gw'], advertiseRoutes: ['10.0.0.0/24'] },
      exit: { tags: ['tag:gw'], advertiseRoutes: ['0.0.0.0/0', '::/0'] },
    });
    for (const route of (await json(await server.call('GET', '/v1/routes'))).routes) {
      if (route.prefix === '10.9.0.0/16') continue;
      expect((await server.call('POST', `/v1/routes/${route.id}/approve`)).status).toBe(200);
    }
    expect((await nodeCall(server, d.exit.nodeToken, 'disconnect')).status).toBe(204);
  });
  afterAll(() => server.close());

  it('reads for each device what the queries one by one read', async () => {
    const db = server.database.storage.db;
    const now = server.clock.now();
    for (const name of Object.keys(d)) {
      const id = d[name]!.device.id;
      const rows = await viewRows(db, server.networkId, id, now);
      expect(rows?.head).toEqual(await netmapHead(db, server.networkId));
      expect(rows?.self).toStrictEqual(await selfRow(db, server.networkId, id));
      expect(new Set(rows?.served)).toEqual(new Set(await servedRoutes(db, server.networkId, now)));
      // Read with the rest on PostgreSQL; on SQLite read when a version is settled.
      // routesOfDevice also reads when its answer can next change (primary_changes_at), to keep it.
      const own = (await routesOfDevice(db, server.networkId, now, id)).map((route) => {
        const { primary_changes_at: _, ...rest } = route as typeof route & { primary_changes_at?: number | null };
        return rest;
      });
      if (rows?.ownRoutes) expect(rows.ownRoutes).toStrictEqual(own);
    }
    const gw1 = await viewRows(db, server.networkId, d.gw1!.device.id, now);
    expect(gw1?.served.length).toBe(4);
    if (gw1?.ownRoutes) expect(gw1.ownRoutes.map((r) => r.prefix)).toEqual(['10.0.0.0/24', '10.9.0.0/16']);
  });

  it('is nothing for a device of another network or one that is gone', async () => {
    const db = server.database.storage.db;
    const now = server.clock.now();
    expect(await viewRows(db, server.networkId, 'dev_gone', now)).toBeUndefined();
    expect(await viewRows(db, 'net_elsewhere', d.ana!.device.id, now)).toBeUndefined();
  });
});

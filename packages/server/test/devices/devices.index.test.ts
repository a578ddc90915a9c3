/**
 * On SQLite the device list is served from an index each server keeps in memory and updates
 * from the devices changed since its last call (modules/devices/device-index.ts). It must
 * never differ from the list read per call: random changes are made to a network's devices,
 * some through the server's own connection and some through a second connection to the same
 * file (another process, or an operator's fix), and after each one every filter is listed both
 * ways: `GET /v1/devices` (the index, and the bodies it keeps while nothing changed) and
 * `GET /v1/devices?fields=all` (SQL per call).
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { backend, json, startServer, type TestServer } from '../harness.js';
import { deviceRow, insertTaggedDevices, listFields, networkOwnerId, writeTags } from './helpers.js';

const TAGS = ['tag:a', 'tag:b', 'tag:c'];
const FILTERS = [
  '',
  '?tag=tag:a',
  '?tag=tag:a&tag=tag:b',
  '?tag=tag:c&online=true',
  '?online=true',
  '?online=false',
  '?user=owner@example.com',
];

type Op =
  | { kind: 'add'; createdOffset: number; tags: string[]; owned: boolean; seenAgo: number | null }
  | { kind: 'tags'; pick: number; tags: string[] }
  | { kind: 'seen'; pick: number; seenAgo: number; disconnected: boolean }
  | { kind: 'owner'; pick: number; owned: boolean }
  | { kind: 'rename'; pick: number }
  | { kind: 'delete'; pick: number }
  | { kind: 'time'; ms: number };

const tagSet = fc.subarray(TAGS);
const pick = fc.nat(1000);
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('add' as const),
    createdOffset: fc.integer({ min: -5, max: 5 }),
    tags: tagSet,
    owned: fc.boolean(),
    seenAgo: fc.option(fc.integer({ min: -10_000, max: 120_000 })),
  }),
  fc.record({ kind: fc.constant('tags' as const), pick, tags: tagSet }),
  fc.record({
    kind: fc.constant('seen' as const),
    pick,
    seenAgo: fc.integer({ min: 0, max: 120_000 }),
    disconnected: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('owner' as const), pick, owned: fc.boolean() }),
  fc.record({ kind: fc.constant('rename' as const), pick }),
  fc.record({ kind: fc.constant('delete' as const), pick }),
  fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 1, max: 70_000 }) }),
);

// PostgreSQL lists per call (see migration 012); there the test holds the two queries to each other.
describe('device list index', () => {
  let server: TestServer;
  let other: Storage;
  let ownerId: string;
  let addrIndex = 10_000;

  beforeAll(async () => {
    server = await startServer();
    const { url, schema } = server.database;
    other = await openStorage(url, schema ? { schema, poolSize: 2 } : {});
    ownerId = await networkOwnerId(server);
  });
  afterAll(async () => {
    await other.close();
    await server.close();
  });

  async function apply(operation: Op, useOther: boolean): Promise<void> {
    const db = useOther ? other.db : server.database.storage.db;
    const networkId = server.networkId;
    const now = server.clock.now();
    const ids = (
      await db.selectFrom('devices').select('id').where('network_id', '=', networkId).orderBy('id').execute()
    ).map((row) => row.id);
    const target = 'pick' in operation && ids.length > 0 ? ids[operation.pick % ids.length]! : undefined;
    switch (operation.kind) {
      case 'add': {
        const id = `dev_${randomBytes(6).toString('hex')}`;
        await insertTaggedDevices(
          db,
          [
            {
              ...deviceRow({ id, networkId, name: id, addrIndex: addrIndex++, nodeTokenHash: id, now }),
              created_at: now + operation.createdOffset,
              user_id: operation.owned ? ownerId : null,
              last_seen_at: operation.seenAgo === null ? null : now - operation.seenAgo,
            },
          ],
          operation.tags,
        );
        return;
      }
      case 'tags':
        if (!target) return;
        await writeTags(db, networkId, target, operation.tags);
        return;
      case 'seen':
        if (!target) return;
        await db
          .updateTable('devices')
          .set({ last_seen_at: now - operation.seenAgo, disconnected: operation.disconnected ? 1 : 0 })
          .where('id', '=', target)
          .execute();
        return;
      case 'owner':
        if (!target) return;
        await db
          .updateTable('devices')
          .set({ user_id: operation.owned ? ownerId : null })
          .where('id', '=', target)
          .execute();
        return;
      case 'rename':
        if (!target) return;
        await db
          .updateTable('devices')
          .set({ name: `renamed-${operation.pick}` })
          .where('id', '=', target)
          .execute();
        return;
      case 'delete':
        if (!target) return;
        await db.deleteFrom('devices').where('id', '=', target).execute();
        return;
      case 'time':
        server.clock.advance(operation.ms);
        return;
    }
  }

  async function listings(query: string) {
    const indexed = (await json(await server.call('GET', `/v1/devices${query}`))).devices;
    const all = `/v1/devices${query ? `${query}&` : '?'}fields=all`;
    const perCall = (await json(await server.call('GET', all))).devices.map(listFields);
    return { indexed, perCall };
  }

  it('lists what a query per call lists, after any sequence of changes by any connection', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(op, fc.boolean()), { minLength: 1, maxLength: 12 }), async (steps) => {
        await server.database.storage.db.deleteFrom('devices').where('network_id', '=', server.networkId).execute();
        for (const [operation, useOther] of steps) {
          await apply(operation, useOther);
          for (const query of FILTERS) {
            const { indexed, perCall } = await listings(query);
            expect(indexed, `${query} after ${JSON.stringify(operation)}`).toEqual(perCall);
          }
          // Nothing changed since: the same bodies again, kept or not (list-bodies.ts).
          for (const query of FILTERS.slice(0, 3)) {
            const { indexed, perCall } = await listings(query);
            expect(indexed, `${query} again`).toEqual(perCall);
          }
        }
      }),
      // PostgreSQL answers each listing over the network: fewer sequences keep it within bounds.
      { numRuns: backend === 'postgres' ? 10 : 25 },
    );
  }, 120_000);

  it('does not serve a kept body past the moment a device it shows times out', async () => {
    await server.database.storage.db.deleteFrom('devices').where('network_id', '=', server.networkId).execute();
    await apply({ kind: 'add', createdOffset: 0, tags: ['tag:a'], owned: false, seenAgo: 10_000 }, false);
    for (const query of ['', '?online=true', '?tag=tag:a']) {
      expect((await listings(query)).indexed[0].online).toBe(true);
    }
    server.clock.advance(49_999);
    expect((await listings('')).indexed[0].online).toBe(true);
    server.clock.advance(1);
    for (const query of ['', '?online=true', '?tag=tag:a']) {
      const { indexed, perCall } = await listings(query);
      expect(indexed).toEqual(perCall);
    }
    expect((await listings('?online=false')).indexed).toHaveLength(1);
  });

  it('lists an empty network, and another network apart', async () => {
    const second = await server.addNetwork();
    const res = await server.call('GET', '/v1/devices', { key: second.apiKey });
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual({ devices: [] });
  });
});

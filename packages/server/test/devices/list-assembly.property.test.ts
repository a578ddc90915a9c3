/**
 * A device list body is made from the one before it (modules/devices/list-assembly.ts): only
 * the segments holding a device that moved are rendered again. After any sequence of changes
 * (heartbeats, disconnects, renames, tag and owner changes, deletions, additions, time passing
 * past devices' timeouts) the body served must be byte for byte the one a server with nothing
 * kept builds from scratch, for every shape and filter.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/core/context.js';
import { type DeviceListInput, type ListShape, listDevicesBody } from '../../src/modules/devices/devices.service.js';
import { keptLists } from '../../src/modules/devices/kept-lists.js';
import { backend, startServer, type TestServer } from '../harness.js';
import { deviceRow, insertTaggedDevices, networkOwnerId, writeTags } from './helpers.js';

const TAGS = ['tag:a', 'tag:b'];
const serialize = (record: object) => JSON.stringify(record);
const SHAPES: ListShape[] = [
  { name: 'prop-list', details: false, serialize },
  { name: 'prop-details', details: true, serialize },
  // A shape that filters on the records, as /api/v2's name and hostname filters do.
  { name: 'prop-renamed', details: true, serialize, shows: (record) => record.name.startsWith('renamed-') },
];
const FILTERS: DeviceListInput[] = [{}, { online: 'true' }, { online: 'false' }, { tag: ['tag:a'] }];

type Op =
  | { kind: 'add'; count: number; tags: string[]; owned: boolean; seenAgo: number | null }
  | { kind: 'heartbeat'; picks: number[] }
  | { kind: 'disconnect'; pick: number }
  | { kind: 'rename'; pick: number }
  | { kind: 'tags'; pick: number; tags: string[] }
  | { kind: 'owner'; pick: number; owned: boolean }
  | { kind: 'delete'; pick: number }
  | { kind: 'time'; ms: number };

const pick = fc.nat(100_000);
const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      count: fc.integer({ min: 1, max: 3 }),
      tags: fc.subarray(TAGS),
      owned: fc.boolean(),
      seenAgo: fc.option(fc.integer({ min: 0, max: 90_000 })),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('heartbeat' as const),
      picks: fc.array(pick, { minLength: 1, maxLength: 8 }),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ kind: fc.constant('disconnect' as const), pick }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('rename' as const), pick }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('tags' as const), pick, tags: fc.subarray(TAGS) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('owner' as const), pick, owned: fc.boolean() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), pick }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('time' as const), ms: fc.integer({ min: 1, max: 40_000 }) }), weight: 2 },
);

describe('device list bodies made from the one before', () => {
  let server: TestServer;
  let ownerId: string;
  let addrIndex = 100;
  /** Kept lists of their own, as a server that has served every step keeps them. */
  let served: AppContext;

  beforeAll(async () => {
    server = await startServer();
    ownerId = await networkOwnerId(server);
  });
  afterAll(() => server.close());

  async function add(count: number, tags: readonly string[], owned: boolean, seenAgo: number | null) {
    const networkId = server.networkId;
    const now = server.clock.now();
    const rows = Array.from({ length: count }, () => {
      const id = `dev_${randomBytes(10).toString('hex')}`;
      return {
        ...deviceRow({ id, networkId, name: `d${addrIndex}`, addrIndex: addrIndex++, nodeTokenHash: id, now }),
        user_id: owned ? ownerId : null,
        last_seen_at: seenAgo === null ? null : now - seenAgo,
      };
    });
    await insertTaggedDevices(server.database.storage.db, rows, tags);
  }

  async function apply(operation: Op): Promise<void> {
    const db = server.database.storage.db;
    const now = server.clock.now();
    const ids = (
      await db.selectFrom('devices').select('id').where('network_id', '=', server.networkId).orderBy('id').execute()
    ).map((row) => row.id);
    const target = (n: number) => ids[n % ids.length]!;
    if (ids.length === 0 && operation.kind !== 'add' && operation.kind !== 'time') return;
    switch (operation.kind) {
      case 'add':
        return add(operation.count, operation.tags, operation.owned, operation.seenAgo);
      case 'heartbeat':
        // As a presence batch writes them: several devices in one transaction.
        await db.transaction().execute(async (trx) => {
          for (const n of operation.picks) {
            await trx
              .updateTable('devices')
              .set({ last_seen_at: now, disconnected: 0 })
              .where('id', '=', target(n))
              .execute();
          }
        });
        return;
      case 'disconnect':
        await db.updateTable('devices').set({ disconnected: 1 }).where('id', '=', target(operation.pick)).execute();
        return;
      case 'rename':
        await db
          .updateTable('devices')
          .set({ name: `renamed-${addrIndex++}` })
          .where('id', '=', target(operation.pick))
          .execute();
        return;
      case 'tags':
        return writeTags(db, server.networkId, target(operation.pick), operation.tags);
      case 'owner':
        await db
          .updateTable('devices')
          .set({ user_id: operation.owned ? ownerId : null })
          .where('id', '=', target(operation.pick))
          .execute();
        return;
      case 'delete':
        await db.deleteFrom('devices').where('id', '=', target(operation.pick)).execute();
        return;
      case 'time':
        server.clock.advance(operation.ms);
        return;
    }
  }

  /** Every shape and filter, from the kept lists that served the steps before and from nothing. */
  async function expectSameAsFromScratch(step: string): Promise<void> {
    for (const shape of SHAPES) {
      for (const filter of FILTERS) {
        const kept = await listDevicesBody(served, server.networkId, filter, shape);
        // A copy of the context has kept lists of its own, empty (kept-lists.ts).
        const scratch = await listDevicesBody({ ...server.app.ctx }, server.networkId, filter, shape);
        expect(kept.toString(), `${shape.name} ${JSON.stringify(filter)} after ${step}`).toBe(scratch.toString());
      }
    }
  }

  it('serves after any sequence of changes the body a build from scratch makes', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 300 }),
        fc.array(op, { minLength: 1, maxLength: 10 }),
        async (fleet, steps) => {
          await server.database.storage.db.deleteFrom('devices').where('network_id', '=', server.networkId).execute();
          served = { ...server.app.ctx };
          await add(fleet, ['tag:a'], false, 1_000);
          await expectSameAsFromScratch('the fleet was added');
          for (const operation of steps) {
            await apply(operation);
            await expectSameAsFromScratch(JSON.stringify(operation));
          }
        },
      ),
      // PostgreSQL answers each of the 24 builds per step over the network: fewer sequences.
      { numRuns: backend === 'postgres' ? 5 : 12 },
    );
  }, 300_000);

  it('renders again only the segments of the devices a heartbeat moved', async () => {
    await server.database.storage.db.deleteFrom('devices').where('network_id', '=', server.networkId).execute();
    served = { ...server.app.ctx };
    await add(2_000, [], false, 1_000);
    const shape = SHAPES[0]!;
    const records = keptLists(served).records;
    const render = records.render.bind(records);
    let rendered = 0;
    records.render = (stamps, ...rest) => {
      rendered += stamps.length;
      return render(stamps, ...rest);
    };
    await listDevicesBody(served, server.networkId, {}, shape);
    expect(rendered).toBe(2_000);
    server.clock.advance(1_000);
    await apply({ kind: 'heartbeat', picks: [7] });
    rendered = 0;
    const body = await listDevicesBody(served, server.networkId, {}, shape);
    // One segment: at most 128 devices, whatever their ids.
    expect(rendered).toBeGreaterThan(0);
    expect(rendered).toBeLessThanOrEqual(128);
    expect(body.toString()).toBe(
      (await listDevicesBody({ ...server.app.ctx }, server.networkId, {}, shape)).toString(),
    );
  }, 120_000);
});

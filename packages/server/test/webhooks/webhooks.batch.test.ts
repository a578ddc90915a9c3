/**
 * A batch of attempts is recorded with the endpoint's cursor in one transaction, and only by
 * the instance that holds the endpoint's lease and read that cursor: an instance whose lease
 * ran out (another took over) or that records a stale copy writes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemActor } from '../../src/core/actor.js';
import { appendEvents } from '../../src/core/events.js';
import { createNetwork } from '../../src/modules/tenants/tenants.service.js';
import type { Outcome } from '../../src/modules/webhooks/attempt.js';
import { type BatchResult, readBatch, recordBatch } from '../../src/modules/webhooks/delivery-batch.js';
import type { Db } from '../../src/storage/database.js';
import { freshDatabase, type TestDatabase } from '../harness.js';

const delivered: Outcome = {
  state: 'delivered',
  attempts: 1,
  status: 204,
  error: null,
  nextAttempt: null,
  gone: false,
};

describe('recording a batch of deliveries', () => {
  let database: TestDatabase;
  let db: Db;
  let networkId = '';
  beforeAll(async () => {
    database = await freshDatabase();
    db = database.storage.db;
    const now = Date.now();
    ({ networkId } = await createNetwork(db, { name: 'n', ownerEmail: 'o@example.com', plan: 'premium', now }));
    await db
      .insertInto('webhooks')
      .values({
        id: 'whk_batch',
        network_id: networkId,
        url: 'http://127.0.0.1:9/',
        events: JSON.stringify(['user.*']),
        description: '',
        enabled: 1,
        disabled_reason: null,
        secret: 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
        previous_secret: null,
        previous_secret_until: null,
        created_at: now,
        last_delivery_at: null,
        event_cursor: 0,
        lease_owner: 'w_holder',
        lease_until: now + 30_000,
      })
      .execute();
  });
  afterAll(() => database.drop());

  const webhook = () => db.selectFrom('webhooks').selectAll().where('id', '=', 'whk_batch').executeTakeFirstOrThrow();
  const deliveries = () => db.selectFrom('webhook_deliveries').selectAll().orderBy('seq').execute();

  it('writes the rows and moves the cursor together, for the lease holder only, once', async () => {
    const actor = systemActor(networkId, 'test');
    await appendEvents(db, actor, Date.now(), [
      { type: 'user.created', data: { n: 1 } },
      { type: 'key.created', data: { n: 2 } },
      { type: 'user.deleted', data: { n: 3 } },
    ]);
    const read = await webhook();
    const batch = await readBatch(db, read, Date.now());
    expect(batch.fresh.map((event) => event.type)).toEqual(['user.created', 'key.created', 'user.deleted']);
    // key.created is not for this endpoint: skipped, but the cursor moves past it.
    const attempted = batch.fresh.filter((event) => event.type.startsWith('user.'));
    const result: BatchResult = {
      retries: [],
      fresh: attempted.map((event) => ({ event, outcome: delivered })),
      cursor: Number(batch.fresh[2]!.seq),
      disabledReason: null,
    };

    expect(await recordBatch(db, read, 'w_other', result)).toBe(false);
    expect(await deliveries()).toEqual([]);
    expect((await webhook()).event_cursor).toBe(read.event_cursor);

    expect(await recordBatch(db, read, 'w_holder', result)).toBe(true);
    const rows = await deliveries();
    expect(rows.map((row) => [row.event_id, row.state, row.attempts, row.last_status])).toEqual(
      attempted.map((event) => [event.id, 'delivered', 1, 204]),
    );
    const after = await webhook();
    expect(after.event_cursor).toBe(result.cursor);
    expect(after.last_delivery_at).not.toBeNull();

    // The same batch again (a copy read before the cursor moved) is refused whole.
    expect(await recordBatch(db, read, 'w_holder', result)).toBe(false);
    expect(await deliveries()).toHaveLength(2);
    expect((await readBatch(db, after, Date.now())).fresh).toEqual([]);
  });
});

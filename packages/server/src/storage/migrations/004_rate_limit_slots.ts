/**
 * Rate-limit counters at a constant cost per request, whatever a key's limit: hits are counted
 * per millisecond slot, and each bucket keeps the running total of its live slots, so a request
 * reads one row, drops the slots that left the window (each slot is dropped once) and adds one.
 * The one-row-per-hit log it replaces made a key raised to 1,000,000/min count a million rows.
 * Counters are transient (a minute's worth), so the old table is dropped, not converted.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const bigint = 'bigint' as const;
  await db.schema
    .createTable('rate_limit_buckets')
    .addColumn('bucket', 'text', (c) => c.primaryKey())
    .addColumn('total', bigint, (c) => c.notNull())
    .addColumn('last_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_limit_buckets_last_at').on('rate_limit_buckets').column('last_at').execute();
  await db.schema
    .createTable('rate_limit_slots')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('at', bigint, (c) => c.notNull())
    .addColumn('hits', bigint, (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_slots_pk', ['bucket', 'at'])
    .execute();
  await db.schema.dropTable('rate_limit_hits').execute();
}

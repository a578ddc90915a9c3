/**
 * Drops the index on `rate_limit_buckets.last_at`, so that the update every hit makes to its
 * bucket's row can be a heap-only (HOT) update on PostgreSQL.
 *
 * Every hit sets `last_at`, and PostgreSQL cannot update a row in place (a HOT update, one new
 * version on the same page and no new index entries) when an indexed column changes. With the
 * index, each hit on a busy key added an entry to both of the table's indexes and its new
 * version went wherever there was room: in a reads benchmark on one key (about 1,000 hits
 * statements a second, docs/decisions/request-path.md) 0–30 % of the updates were HOT, the
 * unused `last_at` index grew from 16 kB to 1 MB in 90 s, and once anything held the oldest
 * snapshot back for a moment, each key check read 75–200 versions of the key's bucket through
 * the primary key instead of 1–2.
 *
 * The only reader of `last_at` is the limiter's sweep, once a minute per instance, looking for
 * buckets idle for a whole window: a sequential scan of a table with one row per active key,
 * address or device, which the hits keep in memory, costs less than what the index cost every
 * hit. SQLite counts in memory and never writes this table; the index goes there too, so that
 * both schemas stay the same.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('rate_limit_buckets_last_at').execute();
}

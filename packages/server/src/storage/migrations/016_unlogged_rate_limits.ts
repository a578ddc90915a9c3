/**
 * PostgreSQL: the rate-limit counters as unlogged tables. They hold a minute's worth of hits,
 * written on every API and node call (a slot and the bucket's total, and the expired slots
 * deleted), and the write-ahead log of those writes was most of what a hit cost the database.
 * An unlogged table is not written to the log: after a crash of the database it comes back
 * empty, so every budget starts afresh once, and a standby promoted in its place starts with
 * no counters. The commits of hits were already asynchronous, which loses the last moment of
 * hits in a crash; this loses at most the last minute. SQLite counts in memory and gets nothing.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`alter table rate_limit_slots set unlogged`.execute(db);
  await sql`alter table rate_limit_buckets set unlogged`.execute(db);
}

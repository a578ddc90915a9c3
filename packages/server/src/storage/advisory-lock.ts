/**
 * A transaction-scoped lock on a name. On PostgreSQL it serialises a check and the write
 * that depends on it across instances (seat limits, single-use keys), and the appends to a
 * log: a sequence value is taken at insert time but becomes visible at commit, so two
 * concurrent writers could make a tailing reader skip a row; locking right before the
 * insert makes sequence order equal commit order. SQLite has a single writer already.
 */
import { sql } from 'kysely';
import type { Db } from './database.js';
import { isPostgres } from './database.js';

export async function advisoryLock(trx: Db, name: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${name}, 0))`.execute(trx);
}

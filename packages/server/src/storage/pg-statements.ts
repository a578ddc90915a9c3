/**
 * Named statements on PostgreSQL. Kysely sends every query unnamed, so the server parses and
 * plans it anew on each call; for the queries run on every request (compiled-query.ts: the key
 * and node-credential lookups, the heartbeat's update, the netmap's head reads) that was a
 * large part of the database's time under a fleet's load. node-postgres prepares a named
 * statement once per connection and then only binds and executes it.
 *
 * Only outside a transaction: a transaction's queries must run on its own connection, which
 * Kysely holds, so those go through Kysely as before (the pool is registered for the database
 * handle alone, never for a transaction's).
 */
import type pg from 'pg';

const pools = new WeakMap<object, pg.Pool>();

export function registerPool(db: object, pool: pg.Pool): void {
  pools.set(db, pool);
}

/** Runs the statement under `name` on the pool, or returns undefined when `db` has no pool of its own. */
export function runPrepared(
  db: object,
  name: string,
  text: string,
  values: readonly unknown[],
): Promise<unknown[]> | undefined {
  const pool = pools.get(db);
  if (!pool) return undefined;
  return pool.query({ name, text, values: values as unknown[] }).then((result) => result.rows);
}

/** Whether `db` is a handle with a pool of its own (not a transaction's). */
export function hasPool(db: object): boolean {
  return pools.has(db);
}

/**
 * Steering SQLite's query planner away from the network's indexes where a key lookup is better.
 *
 * Warren does not run ANALYZE, so SQLite plans without statistics and takes an equality on an
 * indexed column to be selective. `network_id` is not: a network holds all of its devices. Given
 * `network_id = ? and id in (…100 ids…)`, the planner walked the network's 10,000 devices
 * through a (network_id, …) index instead of looking the 100 up by primary key: 9 ms instead
 * of 0.3. The network stays in the condition (a lookup never crosses networks), under SQLite's
 * unary `+`, its documented way to keep a term from selecting an index. PostgreSQL keeps
 * statistics and plans these lookups well; it gets the plain column.
 */
import { type RawBuilder, sql } from 'kysely';
import { type Db, isPostgres } from './database.js';

/** `column` for a WHERE term that must not pick the index (see above). */
export function notForIndex(db: Db, column: string): RawBuilder<string> {
  return isPostgres(db) ? sql<string>`${sql.ref(column)}` : sql<string>`+${sql.ref(column)}`;
}

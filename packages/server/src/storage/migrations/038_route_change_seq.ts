/**
 * SQLite: a network's route counter, `networks.route_change_seq`, moved by triggers in the
 * writer's own transaction whenever one of its routes is added, removed or changed, whoever the
 * writer is. With the device cursor (migration 012), which moves with every change of a device
 * a route's primary flag looks at (presence, approval and login expiry through the record
 * version, removal), it stamps the network's routes: a detail list keeps them while neither
 * moves and the clock has not reached the first moment a primary can change
 * (modules/devices/network-routes.ts). The device index reads both in the statement it already
 * makes once per commit, so an unchanged network's routes cost no statement at all.
 *
 * PostgreSQL gets the column (one schema for both dialects) but no triggers: there routes move
 * the read stamp (migration 034), which the device list reads with its own stamp.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('networks')
    .addColumn('route_change_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;
  const move = (row: 'new' | 'old') =>
    `update networks set route_change_seq = route_change_seq + 1 where id = ${row}.network_id;`;
  await sql.raw(`create trigger routes_change_seq_insert after insert on routes begin ${move('new')} end`).execute(db);
  await sql.raw(`create trigger routes_change_seq_delete after delete on routes begin ${move('old')} end`).execute(db);
  await sql
    .raw(`create trigger routes_change_seq_update after update on routes begin ${move('old')} ${move('new')} end`)
    .execute(db);
}

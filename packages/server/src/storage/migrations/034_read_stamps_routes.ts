/**
 * PostgreSQL: routes move their network's read stamp (migrations 032, 033), so a device's
 * detail record and the route list can be kept per stamp. What else those reads show is the
 * devices' own rows and their presence, which move the device list stamp (migration 029); the
 * key statement reads both (http/authenticate.ts), and such a read is kept while neither moves
 * (storage/compiled-query.ts, `readsDevices`). Routes are written when a device advertises or
 * withdraws one and when an administrator approves or disables one, not by heartbeats.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // As migration 033's triggers: at the writer's commit, once per transaction and network.
  await sql`
    create constraint trigger routes_read_stamp_write after insert or delete on routes
    deferrable initially deferred
    for each row execute function read_stamp_touch('network_id')`.execute(db);
  await sql`
    create constraint trigger routes_read_stamp_change after update on routes
    deferrable initially deferred
    for each row when (to_jsonb(old) is distinct from to_jsonb(new))
    execute function read_stamp_touch('network_id')`.execute(db);
}

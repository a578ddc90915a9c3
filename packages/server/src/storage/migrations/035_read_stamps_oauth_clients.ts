/**
 * PostgreSQL: OAuth clients move their network's read stamp (migrations 032 to 034), so
 * `/api/v2`'s key list, which shows a network's auth keys and its OAuth clients together, is
 * kept per stamp as `/v1/keys` is. A client's row changes only when an administrator creates,
 * changes or revokes it (its tokens live in `oauth_tokens`), so every column is shown.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // As migration 033's triggers: at the writer's commit, once per transaction and network.
  await sql`
    create constraint trigger oauth_clients_read_stamp_write after insert or delete on oauth_clients
    deferrable initially deferred
    for each row execute function read_stamp_touch('network_id')`.execute(db);
  await sql`
    create constraint trigger oauth_clients_read_stamp_change after update on oauth_clients
    deferrable initially deferred
    for each row when (to_jsonb(old) is distinct from to_jsonb(new))
    execute function read_stamp_touch('network_id')`.execute(db);
}

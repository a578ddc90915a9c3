/**
 * PostgreSQL: OAuth clients move their network's read stamp (migrations 032 to 034), so
 * `/api/v2`'s key list, which shows a network's auth keys and its OAuth clients together, is
 * kept per stamp as `/v1/keys` is. A client's row changes only when an administrator creates,
 * changes or revokes it (its tokens live in `oauth_tokens`), so every column is shown.
 */
import { type Kysely, PostgresAdapter } from 'kysely';
import { watchForReadStamp } from './033_read_stamps_keys_users.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await watchForReadStamp(db, 'oauth_clients', 'network_id');
}

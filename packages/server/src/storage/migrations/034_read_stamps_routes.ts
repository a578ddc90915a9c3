/**
 * PostgreSQL: routes move their network's read stamp (migrations 032, 033), so a device's
 * detail record and the route list can be kept per stamp. What else those reads show is the
 * devices' own rows and their presence, which move the device list stamp (migration 029); the
 * key statement reads both (http/authenticate.ts), and such a read is kept while neither moves
 * (storage/compiled-query.ts, `readsDevices`). Routes are written when a device advertises or
 * withdraws one and when an administrator approves or disables one, not by heartbeats.
 */
import { type Kysely, PostgresAdapter } from 'kysely';
import { watchForReadStamp } from './033_read_stamps_keys_users.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await watchForReadStamp(db, 'routes', 'network_id');
}

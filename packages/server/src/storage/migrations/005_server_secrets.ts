/**
 * Secrets of the server itself, shared by every instance on one database: today the key that
 * turns the logs' sequence numbers into opaque ids and cursors (lib/log-ids.ts). A row is
 * created on first use, so a new database needs nothing from its operator.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('server_secrets')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}

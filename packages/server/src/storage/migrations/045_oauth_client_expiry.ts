/**
 * `oauth_clients.expires_at`: a client made by an API key lasts no longer than that key, as a
 * key a key makes does (no escalation). Null: the client lasts until deleted, as in Tailscale;
 * that is every client made by a console session, and every client made before this version.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oauth_clients').addColumn('expires_at', 'bigint').execute();
}

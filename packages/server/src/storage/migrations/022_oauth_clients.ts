/**
 * OAuth clients of Tailscale's API v2 (`keyType: "client"`) and the access tokens they obtain.
 *
 * - `oauth_clients`: a client's secret is stored as its SHA-256 only (shown once, at
 *   creation); `scopes` are Tailscale's scope names and `tags` the tags its auth keys may
 *   carry (JSON lists). Deleting a client revokes it (`revoked_at`), as keys are.
 * - `oauth_tokens`: one-hour access tokens, also stored as their SHA-256. Each call looks a
 *   token up by hash; a client's expired tokens are removed when it obtains a new one, and
 *   all of them when it is deleted, which the (client_id, expires_at) index serves.
 *
 * They are tables of their own, not rows of `keys`: /v1's keys are `auth` and `api` only.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const bigint = 'bigint' as const;
  await db.schema
    .createTable('oauth_clients')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('rate_limit', 'integer')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .addColumn('revoked_at', bigint)
    .addColumn('created_by', 'text')
    .execute();
  await db.schema
    .createIndex('oauth_clients_network_created')
    .on('oauth_clients')
    .columns(['network_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('oauth_tokens')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('client_id', 'text', (c) => c.notNull().references('oauth_clients.id'))
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('oauth_tokens_client_expires')
    .on('oauth_tokens')
    .columns(['client_id', 'expires_at'])
    .execute();
}

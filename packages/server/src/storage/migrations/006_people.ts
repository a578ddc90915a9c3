/**
 * People: console sessions, single sign-on and one-time sign-in links. Every secret (the
 * session cookie, the SSO `state`, a link's token) is kept as its SHA-256 only; the rows are
 * shared by every instance, so any instance can continue a sign-in another one started.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const bigint = 'bigint' as const;

  await db.schema
    .createTable('sessions')
    .addColumn('secret_hash', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    // The role the session was opened with: a role change ends the session (see sessions.store.ts).
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_used_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('sessions_user').on('sessions').columns(['user_id']).execute();

  await db.schema
    .createTable('sso_configs')
    .addColumn('network_id', 'text', (c) => c.primaryKey().references('networks.id'))
    .addColumn('issuer', 'text', (c) => c.notNull())
    .addColumn('client_id', 'text', (c) => c.notNull())
    .addColumn('client_secret', 'text', (c) => c.notNull())
    .addColumn('allowed_domains', 'text', (c) => c.notNull())
    .addColumn('enforce', 'integer', (c) => c.notNull())
    .addColumn('updated_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('sso_logins')
    .addColumn('state_hash', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('code_verifier', 'text', (c) => c.notNull())
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('return_to', 'text', (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('login_links')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('user_id', 'text', (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .execute();

  // Calls made in a console session name the person.
  await db.schema.alterTable('audit_log').addColumn('user_id', 'text').execute();
  await db.schema.alterTable('audit_log').addColumn('user_login', 'text').execute();
}

/**
 * Machine logins: a Tailscale client that starts without an auth key is given a login URL
 * (`/register/{token}`) and waits until a signed-in person approves the machine there. The row
 * keeps the token's SHA-256 only, what the client said of itself (shown to the approver), and
 * how the login ended: `approved_at` with the device it made, or `refusal` with the message the
 * waiting client shows. The network is not known until someone approves (it is theirs), so the
 * row has none before. Rows are shared by every instance: the client may wait on one while the
 * person approves on another.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const bigint = 'bigint' as const;
  await db.schema
    .createTable('machine_logins')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('machine_key', 'text', (c) => c.notNull())
    .addColumn('node_key', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('os', 'text', (c) => c.notNull())
    .addColumn('client_version', 'text')
    .addColumn('request_tags', 'text', (c) => c.notNull())
    .addColumn('ephemeral', 'integer', (c) => c.notNull())
    // The node key the machine held before (`OldNodeKey`: its login expired, or `--force-reauth`).
    .addColumn('old_node_key', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('approved_at', bigint)
    .addColumn('approved_by', 'text')
    .addColumn('network_id', 'text')
    .addColumn('device_id', 'text')
    .addColumn('refusal', 'text')
    .execute();
  // Rows a day past their expiry are pruned by expiry (the events worker's retention sweep).
  await db.schema.createIndex('machine_logins_expires').on('machine_logins').column('expires_at').execute();
}

/**
 * SSH checks: a Tailscale SSH connection under an `ssh` rule with `action: "check"` waits until
 * the source device's owner, signed in to the console, confirms it at `/ssh-check/{token}`. The
 * row keeps the token's SHA-256, the two devices and the local user asked for, the rule's check
 * period, and when (and by whom) it was confirmed: a confirmed row lets the same source into
 * the same destination as the same user without asking again until the period ends. Rows are
 * shared by every instance: the destination's client may wait on one while the person confirms
 * on another.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const bigint = 'bigint' as const;
  await db.schema
    .createTable('ssh_checks')
    .addColumn('token_hash', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('src_device_id', 'text', (c) => c.notNull())
    .addColumn('dst_device_id', 'text', (c) => c.notNull())
    .addColumn('local_user', 'text', (c) => c.notNull())
    .addColumn('period_ms', bigint, (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('approved_at', bigint)
    .addColumn('approved_by', 'text')
    .execute();
  // A connection looks for a confirmation of its pair; old rows are swept by expiry.
  await db.schema
    .createIndex('ssh_checks_pair')
    .on('ssh_checks')
    .columns(['network_id', 'src_device_id', 'dst_device_id', 'local_user'])
    .execute();
  await db.schema.createIndex('ssh_checks_expires').on('ssh_checks').column('expires_at').execute();
}

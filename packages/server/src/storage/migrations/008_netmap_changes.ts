/**
 * `netmap_changes`: which devices each move of a network's netmap epoch was about. A change to
 * a device (enrollment, deletion, tags, routes) writes one row per device with the epoch it
 * moved the network to, in the transaction that made the change, so an instance holding the
 * view of epoch E learns from the rows after E exactly which devices to read again instead of
 * the whole network. An epoch with no row (a policy or role change) cannot be patched and
 * rebuilds the view; old rows are pruned by the writer (modules/node/netmap-changes.ts).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('netmap_changes')
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('netmap_changes_pk', ['network_id', 'epoch', 'device_id'])
    .execute();
}

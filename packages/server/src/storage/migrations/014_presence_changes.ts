/**
 * `presence_changes`: which devices each move of a network's presence epoch was about (a
 * device coming online after silence, enrolling, or disconnecting), written in the transaction
 * of the move. An instance holding the presence snapshot of epoch E reads again only the
 * devices logged after E instead of the whole network's presence: when a fleet comes back
 * online, each heartbeat moved the epoch and every instance re-read 10,000 devices for it.
 * Same shape and rules as `netmap_changes` (migration 008, modules/node/epoch-log.ts).
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('presence_changes')
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('epoch', 'bigint', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('presence_changes_pk', ['network_id', 'epoch', 'device_id'])
    .execute();
}

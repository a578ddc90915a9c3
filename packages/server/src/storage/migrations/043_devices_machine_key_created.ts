/**
 * `devices (network_id, machine_key, created_at, id)` in place of 040's `(network_id,
 * machine_key)`: the enrollment's read of the device a machine enrolled last orders by
 * creation, and SQLite, without statistics, served that order from `devices_network_created`
 * and walked every device of the network for each Tailscale enrollment (a fleet's enrollment
 * grew with the square of its size). With the order in the index the read is one probe; the
 * SSH check's lookup by machine key uses the same index's prefix.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('devices_machine_key').execute();
  await db.schema
    .createIndex('devices_machine_key_created')
    .on('devices')
    .columns(['network_id', 'machine_key', 'created_at', 'id'])
    .execute();
}

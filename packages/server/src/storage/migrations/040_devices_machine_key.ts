/**
 * `devices (network_id, machine_key)`: a Tailscale client that logged out and logs in again
 * with an auth key of the same user presents a new node key and no old one, and is known only
 * by its machine key (modules/devices/enrollment.service.ts). Every Tailscale enrollment looks
 * that key up under the network's lock, so it is one index probe, not a walk of the network's
 * devices.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('devices_machine_key').on('devices').columns(['network_id', 'machine_key']).execute();
}

/**
 * Devices, enrollment and routes. Columns that keep the hot paths to one indexed statement:
 * - `name_base`/`name_seq`: a name is `base` or `base-N`; the next N comes from one indexed
 *   MAX() instead of loading every name that starts with the hostname.
 * - `advertised_routes`: the canonical text of the last advertised set, so a heartbeat
 *   compares one string and touches the routes table only when the set changed.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('name_base', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('devices')
    .addColumn('name_seq', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('devices')
    .addColumn('advertised_routes', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .createIndex('devices_network_name_base')
    .on('devices')
    .columns(['network_id', 'name_base', 'name_seq'])
    .execute();
  // The ephemeral sweeper looks only at ephemeral devices, oldest contact first.
  await db.schema.createIndex('devices_ephemeral_seen').on('devices').columns(['ephemeral', 'last_seen_at']).execute();
  // Primary election compares the routes of one prefix across devices.
  await db.schema
    .createIndex('routes_network_prefix')
    .on('routes')
    .columns(['network_id', 'prefix', 'state'])
    .execute();
}

/**
 * Devices that speak Tailscale's control protocol (control/tailscale/): `protocol` says which
 * protocol a device uses (`native` or `tailscale`), and the Tailscale fields its peers need in
 * their map: the machine key the Noise session proved, the disco key, the UDP endpoints, the
 * home DERP region and the last Hostinfo (JSON). A map request names its device by node key
 * alone (the network is not known before), hence the index on it.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('protocol', 'text', (c) => c.notNull().defaultTo('native'))
    .execute();
  for (const column of ['machine_key', 'disco_key', 'hostinfo']) {
    await db.schema.alterTable('devices').addColumn(column, 'text').execute();
  }
  await db.schema
    .alterTable('devices')
    .addColumn('endpoints', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('devices')
    .addColumn('home_derp', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('devices_node_key').on('devices').column('node_key').execute();
}

/**
 * A change cursor over a network's devices, so a server on SQLite can keep the device list in
 * memory and read only what changed since its last call (modules/devices/device-index.ts):
 *
 * - `networks.device_change_seq` counts the changes a list can see: a device added, or a
 *   change of its presence (`last_seen_at`, `disconnected`), its record (`record_version`, which
 *   migration 011 moves for the name, hostname, os, owner, tags and the owner's login) or its
 *   creation time;
 * - `devices.change_seq` is the count at the device's last such change;
 * - `networks.device_removals` counts deleted devices, which a cursor cannot see.
 *
 * Triggers move them in the writer's own transaction, whoever the writer is (this server,
 * another process on the same file, an operator's fix), and SQLite commits one writer at a
 * time, so sequence order is commit order: reading `change_seq > cursor` misses nothing.
 *
 * PostgreSQL gets the columns (one schema for both dialects) but no triggers. There, writers
 * commit concurrently, so a smaller number can become visible after a larger one and a cursor
 * would skip it; ordering them would serialise every heartbeat of a network on its row. Lists
 * on PostgreSQL read per call instead.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** The device columns whose change a list can show. */
const WATCHED = ['last_seen_at', 'disconnected', 'record_version', 'created_at'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('change_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  for (const column of ['device_change_seq', 'device_removals']) {
    await db.schema
      .alterTable('networks')
      .addColumn(column, 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
  }
  if (db.getExecutor().adapter instanceof PostgresAdapter) return;

  await db.schema.createIndex('devices_network_change').on('devices').columns(['network_id', 'change_seq']).execute();
  // The device takes the network's next number; recursive triggers are off and change_seq is
  // not watched, so the trigger's own update does not fire it again.
  const stamp = `
    update networks set device_change_seq = device_change_seq + 1 where id = new.network_id;
    update devices set change_seq = (select device_change_seq from networks where id = new.network_id)
      where id = new.id;`;
  await sql.raw(`create trigger devices_change_seq_insert after insert on devices begin ${stamp} end`).execute(db);
  const changed = WATCHED.map((column) => `old.${column} is not new.${column}`).join(' or ');
  await sql
    .raw(
      `create trigger devices_change_seq_update after update of ${WATCHED.join(', ')} on devices
       when ${changed} begin ${stamp} end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger devices_change_seq_delete after delete on devices begin
         update networks set device_removals = device_removals + 1 where id = old.network_id;
       end`,
    )
    .execute(db);
}

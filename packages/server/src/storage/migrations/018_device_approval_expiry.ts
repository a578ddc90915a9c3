/**
 * Device approval and node key expiry, as Tailscale has them:
 *
 * - `networks.device_approval` (0/1): new devices wait for an admin's approval;
 *   `networks.node_key_expiry`: how long a device's login lasts, as a duration (`180d`) or `0`
 *   for never. Both are settings read at enrollment only.
 * - `devices.authorized` (0/1; every device that exists already is approved),
 *   `devices.key_expiry_disabled` (0/1) and `devices.key_expired` (0/1): set once, by the
 *   expiry sweep or an admin, when `expires_at` passes, so that "expired" is a stored state
 *   that moves the netmap epoch like any other change, not a clock reading every cached view
 *   would have to repeat. Devices enrolled before this migration keep `expires_at` null: they
 *   never expire until they log in again.
 * - `keys.pre_approved` (0/1): devices an auth key enrolls skip approval.
 *
 * The device list shows approval and expiry, so migration 011's record-version triggers learn
 * the new columns. The sweep finds due devices through a partial index on `expires_at`, a
 * column heartbeats never write (PostgreSQL's in-place updates of migration 017 stay possible).
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** The device columns a list record shows, presence aside (migration 011's, and this one's). */
const SHOWN = [
  'name',
  'hostname',
  'os',
  'user_id',
  'tags',
  'authorized',
  'expires_at',
  'key_expiry_disabled',
  'key_expired',
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('networks')
    .addColumn('device_approval', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('networks')
    .addColumn('node_key_expiry', 'text', (c) => c.notNull().defaultTo('180d'))
    .execute();
  for (const [column, value] of [
    ['authorized', 1],
    ['key_expiry_disabled', 0],
    ['key_expired', 0],
  ] as const) {
    await db.schema
      .alterTable('devices')
      .addColumn(column, 'integer', (c) => c.notNull().defaultTo(value))
      .execute();
  }
  await db.schema
    .alterTable('keys')
    .addColumn('pre_approved', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .createIndex('devices_key_due')
    .on('devices')
    .column('expires_at')
    .where((eb) => eb.and([eb(sql.ref('key_expired'), '=', 0), eb(sql.ref('key_expiry_disabled'), '=', 0)]))
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresTrigger(db);
  else await sqliteTrigger(db);
}

const changed = SHOWN.map((column) => `old.${column} is distinct from new.${column}`).join(' or ');

async function sqliteTrigger(db: Kysely<unknown>): Promise<void> {
  await sql`drop trigger devices_record_version`.execute(db);
  await sql
    .raw(
      `create trigger devices_record_version after update of ${SHOWN.join(', ')} on devices
       when ${changed.replaceAll('is distinct from', 'is not')}
       begin update devices set record_version = record_version + 1 where id = new.id; end`,
    )
    .execute(db);
}

async function postgresTrigger(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `create or replace function devices_record_version() returns trigger language plpgsql as $$
       begin
         if ${changed} then new.record_version := old.record_version + 1; end if;
         return new;
       end $$`,
    )
    .execute(db);
}

/**
 * `devices.record_version`: moves whenever anything the device list shows of a device changes
 * but its presence (name, hostname, os, owner, tags, or the owner's login name). Listing 1,000
 * devices spent most of its time turning their text columns into strings; with this number a
 * server keeps each device's record and reads only ids, versions and presence per list
 * (modules/devices/device-records.ts). Triggers move it, so no write path can forget to, and
 * a heartbeat (which only touches presence) leaves it alone.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** The device columns a list record shows, presence aside. */
const SHOWN = ['name', 'hostname', 'os', 'user_id', 'tags'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('record_version', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  if (db.getExecutor().adapter instanceof PostgresAdapter) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

const changed = SHOWN.map((column) => `old.${column} is distinct from new.${column}`).join(' or ');

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  // SQLite spells IS DISTINCT FROM as IS NOT. Recursive triggers are off, and record_version
  // is not among the columns watched, so the trigger's own update does not fire it again.
  await sql
    .raw(
      `create trigger devices_record_version after update of ${SHOWN.join(', ')} on devices
       when ${changed.replaceAll('is distinct from', 'is not')}
       begin update devices set record_version = record_version + 1 where id = new.id; end`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger users_login_record_version after update of login_name on users
       when old.login_name is not new.login_name
       begin update devices set record_version = record_version + 1 where user_id = new.id; end`,
    )
    .execute(db);
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  await sql
    .raw(
      `create function devices_record_version() returns trigger language plpgsql as $$
       begin
         if ${changed} then new.record_version := old.record_version + 1; end if;
         return new;
       end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger devices_record_version before update on devices
       for each row execute function devices_record_version()`,
    )
    .execute(db);
  await sql
    .raw(
      `create function users_login_record_version() returns trigger language plpgsql as $$
       begin
         update devices set record_version = record_version + 1 where user_id = new.id;
         return null;
       end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger users_login_record_version after update of login_name on users
       for each row when (old.login_name is distinct from new.login_name)
       execute function users_login_record_version()`,
    )
    .execute(db);
}

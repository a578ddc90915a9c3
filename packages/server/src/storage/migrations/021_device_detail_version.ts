/**
 * `devices.record_version` also moves when a column only the detail record shows changes:
 * the client version, the auth key, ephemerality, the protocol, the address. Servers keep
 * detail records between calls (`?fields=all`, `/api/v2`'s device list) by this version, as
 * they keep list records (modules/devices/device-records.ts), so every column either record
 * shows, presence and routes aside, must move it. These columns change at enrollment and
 * re-authentication, not with heartbeats, so list records are rebuilt no more often than before.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** The device columns a list or detail record shows, presence aside (migrations 011, 018, this). */
export const SHOWN = [
  'name',
  'hostname',
  'os',
  'user_id',
  'tags',
  'authorized',
  'expires_at',
  'key_expiry_disabled',
  'key_expired',
  'client_version',
  'key_id',
  'ephemeral',
  'protocol',
  'addr_index',
];

export function up(db: Kysely<unknown>): Promise<void> {
  return moveRecordVersionOn(db, SHOWN);
}

/** Makes `record_version` move on a change of any of `shown`, and only of those (039 adds to them). */
export async function moveRecordVersionOn(db: Kysely<unknown>, shown: readonly string[]): Promise<void> {
  const changed = shown.map((column) => `old.${column} is distinct from new.${column}`).join(' or ');
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql
      .raw(
        `create or replace function devices_record_version() returns trigger language plpgsql as $$
         begin
           if ${changed} then new.record_version := old.record_version + 1; end if;
           return new;
         end $$`,
      )
      .execute(db);
    return;
  }
  await sql`drop trigger devices_record_version`.execute(db);
  await sql
    .raw(
      `create trigger devices_record_version after update of ${shown.join(', ')} on devices
       when ${changed.replaceAll('is distinct from', 'is not')}
       begin update devices set record_version = record_version + 1 where id = new.id; end`,
    )
    .execute(db);
}

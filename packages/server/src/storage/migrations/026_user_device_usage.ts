/**
 * `users.device_count` and `users.devices_seen_at`: what the user list reports of each user's
 * devices (`deviceCount`, and `lastSeen` with the user's own sign-ins). They were a count and
 * a maximum over every device of every user listed, on every call: 0.6 ms for one user with
 * 1,000 devices, ten times that at 10,000. Triggers keep them in the transaction of every
 * change, as migration 009 keeps the network's counts, so no write path can forget them.
 *
 * `last_seen_at` moves with every heartbeat, and indexing it for the maximum would undo the
 * heartbeat's in-place update on PostgreSQL (migration 017). So the user's row is written only
 * when a device's `last_seen_at` enters a new minute (the trigger's condition compares the
 * device's old and new minute, no read needed): `devices_seen_at` trails the newest heartbeat
 * of the user's devices by less than a minute, and a heartbeat costs the user's row a write at
 * most once a minute per device. A deleted device's last sighting stays: the user was seen.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** Moves a user's devices_seen_at forward to `seen` (an expression over the trigger's row). */
const seenBy = (user: string, seen: string) =>
  `update users set devices_seen_at = ${seen}
     where id = ${user} and (devices_seen_at is null or devices_seen_at < ${seen})`;

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .alterTable('users')
    .addColumn('device_count', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('users').addColumn('devices_seen_at', 'bigint').execute();
  await sql`update users set
      device_count = (select count(*) from devices d where d.network_id = users.network_id and d.user_id = users.id),
      devices_seen_at = (select max(d.last_seen_at) from devices d where d.network_id = users.network_id and d.user_id = users.id)`.execute(
    db,
  );
  if (postgres) await postgresTriggers(db);
  else await sqliteTriggers(db);
}

async function sqliteTriggers(db: Kysely<unknown>): Promise<void> {
  const statements = [
    `create trigger devices_user_insert after insert on devices when new.user_id is not null begin
       update users set device_count = device_count + 1 where id = new.user_id;
       ${seenBy('new.user_id', 'new.last_seen_at')};
     end`,
    `create trigger devices_user_delete after delete on devices when old.user_id is not null begin
       update users set device_count = device_count - 1 where id = old.user_id;
     end`,
    `create trigger devices_user_move after update of user_id on devices
       when new.user_id is not old.user_id begin
       update users set device_count = device_count - 1 where id = old.user_id;
       update users set device_count = device_count + 1 where id = new.user_id;
       ${seenBy('new.user_id', 'new.last_seen_at')};
     end`,
    `create trigger devices_user_seen after update of last_seen_at on devices
       when new.user_id is not null and new.last_seen_at / 60000 is not old.last_seen_at / 60000 begin
       ${seenBy('new.user_id', 'new.last_seen_at')};
     end`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}

async function postgresTriggers(db: Kysely<unknown>): Promise<void> {
  const statements = [
    // One function for the three triggers; the argument says whether the owner may have
    // changed ('owner': counts and last sighting) or only the time ('seen'), so an update that
    // fires two of them counts the device once.
    `create function devices_user_usage() returns trigger language plpgsql as $$
     begin
       if tg_argv[0] = 'owner' then
         if tg_op <> 'INSERT' and old.user_id is not null then
           update users set device_count = device_count - 1 where id = old.user_id;
         end if;
         if tg_op <> 'DELETE' and new.user_id is not null then
           update users set device_count = device_count + 1 where id = new.user_id;
         end if;
       end if;
       if tg_op <> 'DELETE' and new.user_id is not null then
         ${seenBy('new.user_id', 'new.last_seen_at')};
       end if;
       return null;
     end $$`,
    `create trigger devices_user_count after insert or delete on devices
       for each row execute function devices_user_usage('owner')`,
    `create trigger devices_user_move after update of user_id on devices
       for each row when (new.user_id is distinct from old.user_id) execute function devices_user_usage('owner')`,
    `create trigger devices_user_seen after update of last_seen_at on devices
       for each row when (new.user_id is not null
         and new.last_seen_at / 60000 is distinct from old.last_seen_at / 60000)
       execute function devices_user_usage('seen')`,
  ];
  for (const statement of statements) await sql.raw(statement).execute(db);
}

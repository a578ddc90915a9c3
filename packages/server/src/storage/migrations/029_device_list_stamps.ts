/**
 * PostgreSQL: a network's device list stamp, so a server can keep the list's bodies between
 * calls (modules/devices/list-bodies.ts) and tell with one indexed read whether anything a list
 * shows has changed since, whoever changed it. SQLite has its change cursor (migration 012).
 *
 * The stamp is the sum of a few counters per network, and triggers add one to a counter in the
 * writer's own transaction whenever a device is added or removed, its presence moves (every
 * heartbeat: `lastSeen` is shown), or its record version moves (migrations 011, 018, 021: every
 * other shown column, and its owner's login name). Routes need no counter: a detail list reads
 * the network's routes on every call, and their text is part of what its body is kept by. The
 * counters only grow, so the sum moves with any of them, and a list read between two reads of
 * an equal sum saw exactly the state both sums stand for (modules/devices/list-stamp.ts).
 *
 * Why several counters: one row per network would make every heartbeat of a network wait for
 * the previous one's commit on that row's lock, and a transaction that changes several devices
 * could deadlock with one that holds one of them and waits for the row. Each write takes a
 * counter no other transaction holds (`for update skip locked`, which still returns the rows
 * its own transaction holds), so it waits for a counter only when all 32 of the network's are
 * held at once. Counters are updated in place (`seq` is in no index), so each stays one row.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** Device columns whose change a list shows: presence, the record version, the order, and the owner. */
const WATCHED = ['last_seen_at', 'disconnected', 'record_version', 'created_at'];
/** Counters per network: more than the writers a network's devices see at once. */
const SLOTS = 32;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create table device_list_stamps (
      network_id text not null references networks (id) on delete cascade,
      slot bigint not null,
      seq bigint not null,
      primary key (network_id, slot)
    )`.execute(db);
  await sql
    .raw(
      `create function device_list_touch(net text) returns void language plpgsql as $$
       declare
         taken bigint;
       begin
         select slot into taken from device_list_stamps where network_id = net
           limit 1 for update skip locked;
         -- Every counter held by another transaction: wait for one, as a single counter would.
         if not found then taken := pg_backend_pid() % ${SLOTS}; end if;
         update device_list_stamps set seq = seq + 1 where network_id = net and slot = taken;
       end $$`,
    )
    .execute(db);
  // Every network has its counters from the start (the table's rows are never inserted by a
  // write of devices, so no two writers can wait on each other's insert).
  await sql
    .raw(
      `create function device_list_stamps_of() returns trigger language plpgsql as $$
       begin
         insert into device_list_stamps (network_id, slot, seq)
           select new.id, s, 0 from generate_series(0, ${SLOTS - 1}) s;
         return new;
       end $$`,
    )
    .execute(db);
  await sql`
    create trigger networks_device_list_stamps after insert on networks
    for each row execute function device_list_stamps_of()`.execute(db);
  await sql
    .raw(
      `insert into device_list_stamps (network_id, slot, seq)
       select networks.id, s, 0 from networks, generate_series(0, ${SLOTS - 1}) s`,
    )
    .execute(db);
  await sql`
    create function device_list_touch_row() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform device_list_touch(old.network_id);
        return old;
      end if;
      perform device_list_touch(new.network_id);
      if tg_op = 'UPDATE' and new.network_id is distinct from old.network_id then
        perform device_list_touch(old.network_id);
      end if;
      return new;
    end $$`.execute(db);
  const changed = WATCHED.map((column) => `old.${column} is distinct from new.${column}`).join(' or ');
  await sql
    .raw(
      `create trigger devices_list_stamp_update after update on devices
       for each row when (${changed} or old.network_id is distinct from new.network_id)
       execute function device_list_touch_row()`,
    )
    .execute(db);
  await sql
    .raw(
      `create trigger devices_list_stamp after insert or delete on devices
       for each row execute function device_list_touch_row()`,
    )
    .execute(db);
}

/**
 * PostgreSQL: a network's device record stamp, which moves with what a route or a device's
 * record shows of the network's devices, and not with an ordinary heartbeat. The device list
 * stamp (migrations 029, 030) moves with every heartbeat, since a list shows `lastSeen`; at
 * 10,000 devices that is about 200 times a second, and the route reads kept by it
 * (`/v1/routes`, a device's routes, the routes of a detail record) were read again for nearly
 * every call while showing nothing a heartbeat changes.
 *
 * A route shows its device's name and a primary flag that follows the presence, approval and
 * login expiry of the routers of its prefix. So the stamp moves when a device is added or
 * removed or moves network, when its record version moves (migrations 011, 018, 021, 039:
 * name, approval, expiry and every other shown column), and when its presence may cross over:
 * `disconnected` changes, or `last_seen_at` is set, cleared, or moves forward by at least
 * CROSSING_MS. A heartbeat of an online device is written only while the device is online at
 * the writer's clock (presence-writes.ts, staysOnline: the new heartbeat is less than the
 * online window, 60 s, after the old one), so a device offline in an answer read before it
 * comes back online with a move of at least the window less the time between the writer
 * reading its clock and committing. CROSSING_MS leaves 15 s for that, and for clocks of two
 * instances that disagree; the fleet's heartbeats, every 20–30 s, stay below it. An online
 * device timing out with nothing written is the clock's, which the route reads' window covers
 * (routes.repository.ts, primaryChangesAt). Frozen: a change of the online window
 * (network/online.ts) needs a migration that moves this bound with it.
 *
 * Counters as in migration 029 (32 per network, a writer takes one no other transaction holds)
 * and moved once per transaction per network, as in migration 030.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** A forward move of `last_seen_at` that may be a device coming back online (see above). */
const CROSSING_MS = 45_000;
const SLOTS = 32;

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create table device_record_stamps (
      network_id text not null references networks (id) on delete cascade,
      slot bigint not null,
      seq bigint not null,
      primary key (network_id, slot)
    )`.execute(db);
  await sql
    .raw(
      `create function device_record_touch(net text) returns void language plpgsql as $$
       declare
         taken bigint;
       begin
         if current_setting('warren.device_records_moved', true) = net then return; end if;
         select slot into taken from device_record_stamps where network_id = net
           limit 1 for update skip locked;
         if not found then taken := pg_backend_pid() % ${SLOTS}; end if;
         update device_record_stamps set seq = seq + 1 where network_id = net and slot = taken;
         perform set_config('warren.device_records_moved', net, true);
       end $$`,
    )
    .execute(db);
  await sql
    .raw(
      `create function device_record_stamps_of() returns trigger language plpgsql as $$
       begin
         insert into device_record_stamps (network_id, slot, seq)
           select new.id, s, 0 from generate_series(0, ${SLOTS - 1}) s;
         return new;
       end $$`,
    )
    .execute(db);
  await sql`
    create trigger networks_device_record_stamps after insert on networks
    for each row execute function device_record_stamps_of()`.execute(db);
  await sql
    .raw(
      `insert into device_record_stamps (network_id, slot, seq)
       select networks.id, s, 0 from networks, generate_series(0, ${SLOTS - 1}) s`,
    )
    .execute(db);
  await sql`
    create function device_record_touch_row() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' then
        perform device_record_touch(old.network_id);
        return old;
      end if;
      perform device_record_touch(new.network_id);
      if tg_op = 'UPDATE' and new.network_id is distinct from old.network_id then
        perform device_record_touch(old.network_id);
      end if;
      return new;
    end $$`.execute(db);
  await sql
    .raw(
      `create trigger devices_record_stamp_update after update on devices
       for each row when (
         old.record_version is distinct from new.record_version
         or old.created_at is distinct from new.created_at
         or old.network_id is distinct from new.network_id
         or old.disconnected is distinct from new.disconnected
         or (old.last_seen_at is null) <> (new.last_seen_at is null)
         or new.last_seen_at - old.last_seen_at >= ${CROSSING_MS})
       execute function device_record_touch_row()`,
    )
    .execute(db);
  await sql`
    create trigger devices_record_stamp after insert or delete on devices
    for each row execute function device_record_touch_row()`.execute(db);
}

/**
 * PostgreSQL: keys and users move their network's read stamp too (migration 032), so the key
 * and user reads can be kept per stamp; and every read stamp trigger moves the stamp at the
 * writer's commit, once per transaction and network.
 *
 * What made keys and users move too often to be watched, and what changed:
 * - An API key's `uses` and `lastUsed` were written every 50 ms while the key was in use. The
 *   audit log now writes them at most once a minute per key and server (http/audit.ts), as
 *   docs/API.md says; a busy key moves the stamp once a minute.
 * - A user's `lastSeen` (`devices_seen_at`, migration 026) was written whenever one of the
 *   user's devices entered a new minute: once a minute per online device. It is now written
 *   only when it enters a new minute itself, with the time of that heartbeat: still within a
 *   minute of the newest heartbeat of the user's devices (the device that sent it entered that
 *   heartbeat's minute with it or with an earlier heartbeat of the same minute), and at most one
 *   write a minute per user.
 *
 * Why at the commit: the heartbeat that moves a user's row, and the audit log's key uses, now
 * take the stamp's row lock, and with the lock taken at the first watched write, a transaction
 * holding it could wait for a device or key row that such a writer holds while that writer
 * waits for the stamp (deleting a user locks the network's row, then its devices). Deferred to
 * the commit, the stamp is the last lock any writer takes: whoever holds it waits for nothing.
 * The move is still in the writer's transaction, so it becomes visible with the change.
 *
 * Why once: a transaction's writes become visible together, so one move stands for all of them
 * (migration 030 does the same for the device list stamp); without it a statement changing many
 * rows stepped over as many versions of the stamp's row.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';
import { WATCHED as READ_STAMP_TABLES } from './032_read_stamps.js';

/** Migration 032's tables, and keys and users, whose every column is shown. */
const WATCHED = {
  ...READ_STAMP_TABLES,
  keys: { network: 'network_id', unseen: [] },
  users: { network: 'network_id', unseen: [] },
};

/**
 * Makes `table`'s writes move their network's read stamp at the writer's commit, once per
 * transaction and network: every insert and delete, and every update that changes a column
 * other than `unseen`. `network`: the column naming the row's network. Later migrations that
 * watch another table use it too.
 */
export async function watchForReadStamp(
  db: Kysely<unknown>,
  table: string,
  network: string,
  unseen: readonly string[] = [],
): Promise<void> {
  const left = `'{${unseen.join(',')}}'::text[]`;
  await sql
    .raw(
      `create constraint trigger ${table}_read_stamp_write after insert or delete on ${table}
       deferrable initially deferred
       for each row execute function read_stamp_touch('${network}')`,
    )
    .execute(db);
  await sql
    .raw(
      `create constraint trigger ${table}_read_stamp_change after update on ${table}
       deferrable initially deferred
       for each row when ((to_jsonb(old) - ${left}) is distinct from (to_jsonb(new) - ${left}))
       execute function read_stamp_touch('${network}')`,
    )
    .execute(db);
}

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  // tg_argv[0]: the column naming the row's network. A row moving between networks moves both.
  await sql`
    create or replace function read_stamp_touch() returns trigger language plpgsql as $$
    declare
      before text := case when tg_op <> 'INSERT' then to_jsonb(old) ->> tg_argv[0] end;
      after text := case when tg_op <> 'DELETE' then to_jsonb(new) ->> tg_argv[0] end;
      net text := coalesce(after, before);
    begin
      if before is distinct from after and before is not null and after is not null then
        update read_stamps set seq = seq + 1 where network_id in (before, after);
        return null;
      end if;
      if current_setting('warren.read_stamp_moved', true) = net then return null; end if;
      update read_stamps set seq = seq + 1 where network_id = net;
      perform set_config('warren.read_stamp_moved', net, true);
      return null;
    end $$`.execute(db);
  for (const [table, { network, unseen }] of Object.entries(WATCHED)) {
    await sql.raw(`drop trigger if exists ${table}_read_stamp_write on ${table}`).execute(db);
    await sql.raw(`drop trigger if exists ${table}_read_stamp_change on ${table}`).execute(db);
    await watchForReadStamp(db, table, network, unseen);
  }
  // A user's last sighting by their devices: written when it enters a new minute (above).
  await sql`
    create or replace function devices_user_usage() returns trigger language plpgsql as $$
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
        update users set devices_seen_at = new.last_seen_at
          where id = new.user_id
            and (devices_seen_at is null or devices_seen_at / 60000 < new.last_seen_at / 60000);
      end if;
      return null;
    end $$`.execute(db);
}

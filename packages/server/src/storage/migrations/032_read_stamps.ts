/**
 * PostgreSQL: a network's read stamp, so a server can keep the answers of small reads between
 * calls and tell with no round trip of its own whether any of them changed: the statement that
 * reads the caller's API key also reads the stamp (http/authenticate.ts), and a kept answer is
 * served only to a call whose stamp is the one it was read at (storage/compiled-query.ts). SQLite
 * has its commit counter for the same purpose.
 *
 * Triggers add one to the stamp in the writer's own transaction whenever a row that such a read
 * shows is inserted, deleted or changed, whoever writes it (a unit of work, another instance, the
 * command line, a trigger of another table): the network's own row (its settings, plan and
 * usage counts), its single sign-on, its policy versions and its webhook endpoints. Columns that
 * move without being shown are left out, so that the fleet does not move the stamp: the
 * network's epochs and address counter (every enrollment and presence crossing), and a webhook's
 * lease and event cursor (its dispatcher, every few deliveries). A column added later is watched
 * until someone leaves it out here, so forgetting one costs a kept answer, never a stale one.
 *
 * One row per network: the tables watched are written by administrators' changes, which already
 * wait for each other on the network's audit lock from their audit entry to their commit, and
 * by enrollments and deletions, which already hold the network's row. No heartbeat writes any of
 * them.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/** Table → the column naming its network, and the columns that change without being shown. */
export const WATCHED: Readonly<Record<string, { network: string; unseen: string[] }>> = {
  networks: {
    network: 'id',
    unseen: ['next_addr_index', 'netmap_epoch', 'presence_epoch', 'device_change_seq', 'device_removals'],
  },
  sso_configs: { network: 'network_id', unseen: [] },
  policies: { network: 'network_id', unseen: [] },
  webhooks: { network: 'network_id', unseen: ['lease_owner', 'lease_until', 'event_cursor'] },
};

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create table read_stamps (
      network_id text primary key references networks (id) on delete cascade,
      seq bigint not null
    )`.execute(db);
  await sql`insert into read_stamps (network_id, seq) select id, 0 from networks`.execute(db);
  // Every network has its row from the start, so no writer waits on another's insert of it.
  await sql`
    create function read_stamp_of() returns trigger language plpgsql as $$
    begin
      insert into read_stamps (network_id, seq) values (new.id, 0);
      return new;
    end $$`.execute(db);
  await sql`
    create trigger networks_read_stamp after insert on networks
    for each row execute function read_stamp_of()`.execute(db);
  // tg_argv[0]: the column naming the row's network.
  await sql`
    create function read_stamp_touch() returns trigger language plpgsql as $$
    declare
      before text := case when tg_op <> 'INSERT' then to_jsonb(old) ->> tg_argv[0] end;
      after text := case when tg_op <> 'DELETE' then to_jsonb(new) ->> tg_argv[0] end;
    begin
      update read_stamps set seq = seq + 1 where network_id in (before, after);
      return null;
    end $$`.execute(db);
  for (const [table, { network, unseen }] of Object.entries(WATCHED)) {
    const left = `'{${unseen.join(',')}}'::text[]`;
    await sql
      .raw(
        `create trigger ${table}_read_stamp_write after insert or delete on ${table}
         for each row execute function read_stamp_touch('${network}')`,
      )
      .execute(db);
    await sql
      .raw(
        `create trigger ${table}_read_stamp_change after update on ${table}
         for each row when ((to_jsonb(old) - ${left}) is distinct from (to_jsonb(new) - ${left}))
         execute function read_stamp_touch('${network}')`,
      )
      .execute(db);
  }
}

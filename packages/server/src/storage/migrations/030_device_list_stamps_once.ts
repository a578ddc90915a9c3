/**
 * PostgreSQL: a transaction moves a network's device list stamp (migration 029) once, not once
 * per device row it writes. A statement that changed 1,000 devices updated one counter 1,000
 * times in one transaction, and each update had to step over the row versions the earlier ones
 * left, which no one can prune before the commit: 913 ms for 1,000 rows against 142 ms without
 * the trigger.
 *
 * Once is enough: readers compare sums read before and after building a list, and a
 * transaction's writes become visible all at once, at its commit, with its one increment. The
 * network the transaction has moved is remembered in a setting local to the transaction, which
 * PostgreSQL also undoes when a savepoint holding the increment is rolled back.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create or replace function device_list_touch(net text) returns void language plpgsql as $$
    declare
      taken bigint;
    begin
      if current_setting('warren.device_list_moved', true) = net then return; end if;
      select slot into taken from device_list_stamps where network_id = net
        limit 1 for update skip locked;
      -- Every counter held by another transaction: wait for one, as a single counter would.
      if not found then taken := pg_backend_pid() % 32; end if;
      update device_list_stamps set seq = seq + 1 where network_id = net and slot = taken;
      perform set_config('warren.device_list_moved', net, true);
    end $$`.execute(db);
}

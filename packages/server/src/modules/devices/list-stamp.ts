/**
 * PostgreSQL: the network's device list stamp, the sum of the counters migration 029's
 * triggers move in the transaction of every write a device list can show (presence included),
 * whichever instance writes. One indexed read of the network's few counters.
 *
 * A list built between two reads of the same stamp shows exactly the state that stamp stands
 * for: the counters only grow, so an equal sum means no such write committed in between, and
 * under READ COMMITTED each statement of the build saw every write committed before it began.
 * A body is kept only then (list-bodies.ts), and served while a fresh read gives the same stamp.
 *
 * The same statement reads the network's read stamp (migration 032), which routes move
 * (migration 034), and its device record stamp (migration 044): together what the network's
 * routes are kept by (network-routes.ts), so a detail list knows whether they moved without
 * reading them, and ordinary heartbeats do not move them.
 */
import { sql } from 'kysely';
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';

const stampOf = compiledQuery(
  (db, p: { networkId: string }) =>
    db
      .selectFrom('device_list_stamps')
      .select([
        sql<string>`coalesce(sum(seq), 0)::text`.as('stamp'),
        (eb) =>
          eb
            .selectFrom('read_stamps')
            .select('read_stamps.seq')
            .where('read_stamps.network_id', '=', p.networkId)
            .as('read_seq'),
        (eb) =>
          eb
            .selectFrom('device_record_stamps')
            .select(sql<string>`coalesce(sum(device_record_stamps.seq), 0)::text`.as('records'))
            .where('device_record_stamps.network_id', '=', p.networkId)
            .as('record_seq'),
      ])
      .where('network_id', '=', p.networkId),
  { name: 'device-list-stamps' },
);

export interface ListStamps {
  /** The device list stamp, as text (the version a kept body was made at). */
  list: string;
  /** The read stamp beside it, for the network's routes; undefined for a network without one. */
  routes: ReadStamp | undefined;
}

export async function deviceListStamps(db: Db, networkId: string): Promise<ListStamps> {
  const [row] = await stampOf(db, { networkId });
  const list = row?.stamp ?? '0';
  const routes =
    row?.read_seq == null
      ? undefined
      : { networkId, seq: Number(row.read_seq), devices: Number(list), records: Number(row.record_seq) };
  return { list, routes };
}

export async function deviceListStamp(db: Db, networkId: string): Promise<string> {
  return (await deviceListStamps(db, networkId)).list;
}

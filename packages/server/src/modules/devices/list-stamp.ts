/**
 * PostgreSQL: the network's device list stamp, the sum of the counters migration 029's
 * triggers move in the transaction of every write a device list can show (presence included),
 * whichever instance writes. One indexed read of the network's few counters.
 *
 * A list built between two reads of the same stamp shows exactly the state that stamp stands
 * for: the counters only grow, so an equal sum means no such write committed in between, and
 * under READ COMMITTED each statement of the build saw every write committed before it began.
 * A body is kept only then (list-bodies.ts), and served while a fresh read gives the same stamp.
 */
import { sql } from 'kysely';
import { compiledQuery } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';

const stampOf = compiledQuery((db, p: { networkId: string }) =>
  db
    .selectFrom('device_list_stamps')
    .select(sql<string>`coalesce(sum(seq), 0)::text`.as('stamp'))
    .where('network_id', '=', p.networkId),
);

export async function deviceListStamp(db: Db, networkId: string): Promise<string> {
  const [row] = await stampOf(db, { networkId });
  return row?.stamp ?? '0';
}

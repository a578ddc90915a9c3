/**
 * Devices crossing over (online ↔ offline), written in batches per network.
 *
 * A crossing moves the network's presence epoch and logs the device against it
 * (presence-changes.ts), and the epoch's row lock is what keeps epochs in commit order, so the
 * crossings of one network commit one after another. Written one by one, a fleet coming back
 * online (10,000 devices within a heartbeat interval, after a restart or a network outage)
 * queued on that lock at one commit per crossing, about 70 a second on PostgreSQL, each holding
 * a pooled connection while it waited, until heartbeats that crossed nothing waited for one too.
 *
 * So crossings of a network on this instance are batched (lib/write-batches.ts): the first is
 * written at once, and those that arrive while a write is in flight go together in the next
 * one, as one update of their devices, one epoch move and one log entry per device. A device
 * named twice in one batch is written once, with its latest presence.
 */
import { sql } from 'kysely';
import { withChanges } from '../../core/changes.js';
import { batchedWrites } from '../../lib/write-batches.js';
import { pgNotifySql } from '../../storage/change-signal.js';
import type { Db } from '../../storage/database.js';
import { isPostgres } from '../../storage/database.js';
import { presenceEpoch, presenceMoveCtes } from '../network/epochs.js';
import { prunePresenceChanges } from '../network/presence-changes.js';

export interface Presence {
  last_seen_at: number;
  disconnected: number;
}

/** What a crossing returns: the device's advertised routes, or undefined when it is gone. */
export type Crossed = { advertised_routes: string } | undefined;

/** Devices per statement: PostgreSQL takes them as arrays, SQLite one update each. */
const MAX_BATCH = 1_000;

/**
 * Sets the device's presence, moves the network's presence epoch and logs the device against
 * it, batched with the network's other crossings on this instance (see above). Resolves to the
 * device's advertised routes, or undefined when it is gone (in a batch of its own, nothing moves).
 */
export function crossPresence(db: Db, networkId: string, deviceId: string, presence: Presence): Promise<Crossed> {
  return queueCrossing(db, networkId, { deviceId, ...presence });
}

const queueCrossing = batchedWrites(async (db: Db, networkId: string, batch: readonly Crossing[]) => {
  // A device named twice is written once, with the presence queued last.
  const latest = new Map(batch.map((crossing) => [crossing.deviceId, crossing]));
  const crossed = await writeCrossings(db, networkId, [...latest.values()]);
  return batch.map((crossing) => crossed.get(crossing.deviceId));
}, MAX_BATCH);

interface Crossing extends Presence {
  deviceId: string;
}

async function writeCrossings(db: Db, networkId: string, batch: readonly Crossing[]): Promise<Map<string, Crossed>> {
  const crossed = new Map<string, Crossed>();
  if (isPostgres(db)) {
    // One statement: the epoch's row lock is held from the bump to the commit, not across
    // round trips to a process that may be busy elsewhere. Devices go in id order: joined by
    // their key one after another, two instances' batches sharing devices lock them in one
    // order (a device crossing on two instances at once is rare; PostgreSQL would break a
    // deadlock by failing one batch, whose devices cross again on their next call). The
    // statement also signals the move, delivered as it commits (storage/change-signal.ts).
    const sorted = [...batch].sort((a, b) => (a.deviceId < b.deviceId ? -1 : a.deviceId > b.deviceId ? 1 : 0));
    const { rows } = await sql<{ id: string; advertised_routes: string; epoch: string | number | null }>`
      with crossed as (
        update devices set last_seen_at = v.last_seen_at, disconnected = v.disconnected
        from unnest(${sorted.map((c) => c.deviceId)}::text[], ${sorted.map((c) => c.last_seen_at)}::bigint[],
                    ${sorted.map((c) => c.disconnected)}::integer[]) as v(id, last_seen_at, disconnected)
        where devices.id = v.id and devices.network_id = ${networkId}
        returning devices.id, devices.advertised_routes
      ), ${presenceMoveCtes(networkId)}
      select crossed.id, crossed.advertised_routes, (select presence_epoch from moved) as epoch,
        (select ${pgNotifySql(networkId)} from moved) as signalled
      from crossed`.execute(db);
    for (const row of rows) crossed.set(row.id, { advertised_routes: row.advertised_routes });
    const epoch = rows[0]?.epoch;
    if (epoch != null) await prunePresenceChanges(db, networkId, Number(epoch));
    return crossed;
  }
  // SQLite: one writer, so the transaction holds nothing another connection waits on for long.
  await withChanges(db, networkId, async (trx, changes) => {
    for (const { deviceId, last_seen_at, disconnected } of batch) {
      const row = await trx
        .updateTable('devices')
        .set({ last_seen_at, disconnected })
        .where('id', '=', deviceId)
        .where('network_id', '=', networkId)
        .returning('advertised_routes')
        .executeTakeFirst();
      if (row) crossed.set(deviceId, row);
    }
    if (crossed.size > 0) await changes.touch(presenceEpoch, [...crossed.keys()]);
  });
  return crossed;
}

/**
 * A log of which devices each move of a network epoch was about: per network and epoch, one
 * row per device (migrations 008 and 014). It lets an instance holding state made at epoch E
 * (a netmap view, a presence snapshot) read again only the devices that changed after E,
 * instead of the whole network, whichever instance made the change.
 *
 * Rows are written after the epoch moves and in the same transaction (core/changes.ts); the
 * move locks the network's row until commit, so epochs commit in order and a head that shows
 * epoch E comes with the rows of every epoch up to E. An epoch with no row at all (a change that does not
 * log) is not covered, and a reader older than it starts over from a whole read: forgetting to
 * log is slower, never wrong.
 */
import type { Db } from '../../storage/database.js';

/** Epochs kept per network: a reader older than this many changes starts over. */
export const KEPT_EPOCHS = 1_000;
/** Pruning runs on one write in this many, so a change pays for it rarely. */
const PRUNE_EVERY = 64;

type LogTable = 'netmap_changes' | 'presence_changes';

export interface EpochLog {
  /**
   * The INSERT of one move's rows as a part of a larger PostgreSQL statement (a unit of work's
   * records, core/change-records.ts): its parameters are $first (the network id), $first + 1
   * (the epoch) and $first + 2 (the device ids, an array).
   */
  insertText(first: number): string;
  /** Records that the move to `epoch`, which the transaction `trx` made, is about these ids. */
  log(trx: Db, networkId: string, epoch: number, ids: readonly string[]): Promise<void>;
  /**
   * The ids logged after epoch `from` up to `to`, or undefined when the log does not cover
   * every epoch in between (pruned, or an epoch that did not log).
   */
  changedSince(db: Db, networkId: string, from: number, to: number): Promise<string[] | undefined>;
  /** Drops rows older than KEPT_EPOCHS before `epoch`, on one write in PRUNE_EVERY. */
  prune(db: Db, networkId: string, epoch: number): Promise<void>;
}

export function epochLog(table: LogTable): EpochLog {
  // One shape for both tables; Kysely's types follow one of them.
  const t = table as 'netmap_changes';
  const prune = async (db: Db, networkId: string, epoch: number) => {
    if (epoch % PRUNE_EVERY !== 0) return;
    await db
      .deleteFrom(t)
      .where('network_id', '=', networkId)
      .where('epoch', '<=', epoch - KEPT_EPOCHS)
      .execute();
  };
  return {
    insertText: (first) =>
      `insert into ${table} (network_id, epoch, device_id) ` +
      `select $${first}::text, $${first + 1}::bigint, unnest($${first + 2}::text[]) on conflict do nothing`,

    async log(trx, networkId, epoch, ids) {
      if (ids.length === 0) return;
      const unique = [...new Set(ids)];
      for (let i = 0; i < unique.length; i += 500) {
        await trx
          .insertInto(t)
          .values(unique.slice(i, i + 500).map((device_id) => ({ network_id: networkId, epoch, device_id })))
          .onConflict((oc) => oc.doNothing())
          .execute();
      }
      await prune(trx, networkId, epoch);
    },

    prune,

    async changedSince(db, networkId, from, to) {
      if (to <= from) return [];
      if (to - from > KEPT_EPOCHS) return undefined;
      const rows = await db
        .selectFrom(t)
        .select(['epoch', 'device_id'])
        .where('network_id', '=', networkId)
        .where('epoch', '>', from)
        .where('epoch', '<=', to)
        .execute();
      const epochs = new Set(rows.map((r) => Number(r.epoch)));
      if (epochs.size !== to - from) return undefined;
      return [...new Set(rows.map((r) => r.device_id))];
    },
  };
}

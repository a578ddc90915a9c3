/**
 * What a change declares it touches beyond its own rows: the state every instance follows by an
 * epoch on the network's row (netmaps, presence). Each such epoch comes with a log of which
 * devices each move was about, so an instance holding state made at an older epoch reads again
 * only those devices.
 *
 * A change declares (`changes.touch(netmapEpoch, [deviceId])`) and the transaction does the rest:
 * the first declaration of an epoch moves it, later ones only name more devices, and every
 * device named is logged once, against the epoch moved to, when the work is done. So an epoch
 * moves once per transaction whatever the number of declarations, and no change can move an
 * epoch and forget its log, or log against an epoch it did not move.
 *
 * The move happens at the first declaration rather than at the end because it locks the
 * network's row: every transaction that changes netmaps takes that lock before the rows it
 * writes (docs/ARCHITECTURE.md, lock order), so declare before writing. The epochs themselves,
 * their rows and logs, belong to modules/network; this file knows them only by the Epoch shape.
 */
import type { Db } from '../storage/database.js';

/** An epoch of the network's row and its change log (modules/network/epochs.ts). */
export interface Epoch {
  /** Moves the network's epoch, locking its row until commit; resolves to the epoch moved to. */
  move(trx: Db, networkId: string): Promise<number>;
  /** Records that the move to `epoch` was about these devices. */
  log(trx: Db, networkId: string, epoch: number, deviceIds: readonly string[]): Promise<void>;
  /**
   * What `log` writes, as a part of a larger PostgreSQL statement, so that a unit of work can
   * write the logs in the statement of its audit entries (change-records.ts): its parameters are
   * $first (the network id), $first + 1 (the epoch) and $first + 2 (the device ids, an array).
   */
  logInsertText(first: number): string;
  /** What `log` does after writing the rows (pruning the log now and then). */
  afterLog(trx: Db, networkId: string, epoch: number): Promise<void>;
}

/** The devices a move was about, not yet logged. */
export interface PendingLog {
  epoch: Epoch;
  to: number;
  deviceIds: readonly string[];
}

export interface Changes {
  /**
   * The change alters what `epoch` follows, about these devices (their rows, tags, routes,
   * presence). Named none by the end of the work, the move covers every device, and readers
   * older than it start over from a whole read.
   */
  touch(epoch: Epoch, deviceIds?: readonly string[]): Promise<void>;
  /**
   * `epoch` was moved to `to` by a statement of the change's own that also read what the row
   * lock protects (an enrollment's address counter): devices touched later are logged against it.
   */
  moved(epoch: Epoch, to: number): void;
}

interface Move {
  to: Promise<number>;
  devices: Set<string>;
}

class DeclaredChanges implements Changes {
  private readonly moves = new Map<Epoch, Move>();

  constructor(
    private readonly trx: Db,
    private readonly networkId: string,
  ) {}

  async touch(epoch: Epoch, deviceIds: readonly string[] = []): Promise<void> {
    let move = this.moves.get(epoch);
    if (!move) {
      move = { to: epoch.move(this.trx, this.networkId), devices: new Set() };
      this.moves.set(epoch, move);
    }
    for (const id of deviceIds) move.devices.add(id);
    await move.to;
  }

  moved(epoch: Epoch, to: number): void {
    if (this.moves.has(epoch)) throw new Error('an epoch moves once per transaction');
    this.moves.set(epoch, { to: Promise.resolve(to), devices: new Set() });
  }

  /** Every device declared, once per epoch moved (an epoch that named none has no log). */
  async pending(): Promise<PendingLog[]> {
    const logs: PendingLog[] = [];
    for (const [epoch, move] of this.moves) {
      if (move.devices.size > 0) logs.push({ epoch, to: await move.to, deviceIds: [...move.devices] });
    }
    return logs;
  }
}

/**
 * Runs `fn` in a transaction of the network's, with its declared changes logged before commit.
 * For writes with no audit entry and no event (a device's own report of its endpoints); a change
 * that is audited goes through unitOfWork, which builds on this.
 */
export async function withChanges<T>(
  db: Db,
  networkId: string,
  fn: (trx: Db, changes: Changes) => Promise<T>,
): Promise<T> {
  return db.transaction().execute((trx) => inTransaction(trx, networkId, fn));
}

/** withChanges inside a transaction already open. */
export async function inTransaction<T>(
  trx: Db,
  networkId: string,
  fn: (trx: Db, changes: Changes) => Promise<T>,
): Promise<T> {
  const { value, logs } = await loggingLater(trx, networkId, fn);
  for (const { epoch, to, deviceIds } of logs) await epoch.log(trx, networkId, to, deviceIds);
  return value;
}

/**
 * As inTransaction, leaving the logs to the caller, who must write them before the commit
 * (unit-of-work.ts writes them with the change's audit entries); then `afterLog` of each.
 */
export async function loggingLater<T>(
  trx: Db,
  networkId: string,
  fn: (trx: Db, changes: Changes) => Promise<T>,
): Promise<{ value: T; logs: PendingLog[] }> {
  const changes = new DeclaredChanges(trx, networkId);
  const value = await fn(trx, changes);
  return { value, logs: await changes.pending() };
}

/**
 * Retention of the connection log: entries recorded longer ago than the network's plan
 * keeps them (free 7 days, premium 90) are deleted by a background sweep. It deletes in
 * batches of a few thousand rows, each its own short statement, and yields between them,
 * so writers and readers are never held up for long. Several instances sweeping the same
 * PostgreSQL database at once is harmless: a row is deleted once.
 */
import type { AppContext, Settings } from '../../core/context.js';
import type { Worker, WorkerLog } from '../../core/worker.js';
import type { Db } from '../../storage/database.js';
import { logRetentionDays } from '../network/plans.js';
import { deleteConnectionsBefore } from './connections.repository.js';

const DAY_MS = 86_400_000;
export const RETENTION_BATCH = 5_000;
export const RETENTION_INTERVAL_MS = 10 * 60_000;

export interface SweepOptions {
  settings?: Partial<Settings>;
  /** Rows per DELETE statement. */
  batch?: number;
  /** Checked between statements: the sweep ends early when the server is closing. */
  shouldStop?: () => boolean;
}

const yieldToRequests = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Deletes every network's expired entries as of `now`; returns how many were deleted. */
export async function sweepConnectionLog(db: Db, now: number, options: SweepOptions = {}): Promise<number> {
  const batch = options.batch ?? RETENTION_BATCH;
  const networks = await db.selectFrom('networks').select(['id', 'plan']).orderBy('id').execute();
  let deleted = 0;
  for (const network of networks) {
    const cutoff = now - logRetentionDays(network.plan, options.settings) * DAY_MS;
    for (;;) {
      if (options.shouldStop?.()) return deleted;
      const count = await deleteConnectionsBefore(db, network.id, cutoff, batch);
      deleted += count;
      if (count < batch) break;
      await yieldToRequests();
    }
  }
  return deleted;
}

/**
 * Starts the periodic sweep (the timer does not keep the process alive); stopping it waits for
 * a sweep in progress to finish its current statement.
 */
export function startConnectionRetention(ctx: Pick<AppContext, 'db' | 'clock' | 'settings'>, log: WorkerLog): Worker {
  const intervalMs = ctx.settings.connectionRetentionIntervalMs ?? RETENTION_INTERVAL_MS;
  let stopped = false;
  let running: Promise<void> | undefined;
  const run = () => {
    if (running || stopped) return;
    running = sweepConnectionLog(ctx.db, ctx.clock.now(), { settings: ctx.settings, shouldStop: () => stopped })
      .then((deleted) => {
        if (deleted > 0) log.info({ deleted }, 'connection log: expired entries deleted');
      })
      .catch((error: unknown) => log.error({ err: error }, 'connection log retention sweep failed'))
      .finally(() => {
        running = undefined;
      });
  };
  const timer = setInterval(run, intervalMs).unref();
  const stop = async () => {
    stopped = true;
    clearInterval(timer);
    await running;
  };
  return { stop };
}

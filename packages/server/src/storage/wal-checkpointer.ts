/**
 * SQLite's WAL checkpoints, off the event loop. By default the connection whose commit takes
 * the write-ahead log past 1,000 pages copies the log into the database file there and then,
 * with two fsyncs: on the server that is the one connection every request shares, so a
 * heartbeat's commit now and then took 30–75 ms instead of 0.1 ms, and a fleet's heartbeats
 * spent two thirds of their write time checkpointing (figures in docs/decisions/request-path.md).
 *
 * A worker thread holds its own connection and checkpoints on an interval in PASSIVE mode,
 * which copies what no reader still needs and never blocks the writer. The writer keeps its
 * automatic checkpoint only as a backstop, at a size the log reaches when the worker cannot keep
 * up, and goes back to SQLite's default if the worker fails.
 */
import { Worker } from 'node:worker_threads';
import type SqliteDatabase from 'better-sqlite3';

/** The writer's own checkpoint threshold while the worker runs (pages; about 40 MB of log). */
export const BACKSTOP_PAGES = 10_000;
const SQLITE_DEFAULT_PAGES = 1_000;

export interface WalCheckpointer {
  /**
   * Settles once the worker's connection is open and its interval runs (or the worker failed,
   * and the writer checkpoints for itself again). Starting a thread and loading the SQLite
   * addon in it can take a second on a busy machine; until then the writer's backstop applies.
   */
  started: Promise<void>;
  /** Stops the worker and closes its connection. */
  stop(): Promise<void>;
}

export function startWalCheckpointer(
  writer: SqliteDatabase.Database,
  path: string,
  intervalMs = 1_000,
): WalCheckpointer {
  writer.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
  const worker = new Worker(new URL('./wal-checkpoint.worker.mjs', import.meta.url), {
    workerData: { path, intervalMs },
  });
  // The thread must not keep a process alive that is otherwise done.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const started = new Promise<void>((resolve) => {
    worker.once('message', () => resolve());
    worker.once('exit', () => resolve());
  });
  worker.once('error', () => {
    if (writer.open) writer.pragma(`wal_autocheckpoint = ${SQLITE_DEFAULT_PAGES}`);
  });
  return {
    started,
    stop: async () => {
      // Held again while it closes, or a process with nothing else to do would exit first.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

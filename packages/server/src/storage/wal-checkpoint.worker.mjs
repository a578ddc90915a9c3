// The WAL checkpointer's thread (wal-checkpointer.ts): its own connection to the database file,
// checkpointing in PASSIVE mode on an interval, which never waits for, nor blocks, the server's
// readers and writer. Plain JavaScript: a worker does not go through the TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';

const { path, intervalMs } = workerData;
const db = new Database(path, { fileMustExist: true });
const timer = setInterval(() => db.pragma('wal_checkpoint(PASSIVE)'), intervalMs);
// Told once the connection is open, so a caller can know that checkpoints have begun.
parentPort.postMessage('open');

parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});

import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BACKSTOP_PAGES, startWalCheckpointer } from '../../src/storage/wal-checkpointer.js';
import { backend } from '../harness.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(backend !== 'sqlite')('WAL checkpointer', () => {
  let dir: string;
  let path: string;
  let writer: SqliteDatabase.Database;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'warren-wal-'));
    path = join(dir, 'warren.db');
    writer = new SqliteDatabase(path);
    writer.pragma('journal_mode = WAL');
    writer.pragma('synchronous = NORMAL');
    writer.exec('create table scratch (id integer primary key, body blob)');
  });
  afterEach(() => {
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** About 100 pages of log per commit: 100 rows of 4 kB. */
  const insert = (db: SqliteDatabase.Database) =>
    db.transaction(() => {
      const statement = db.prepare('insert into scratch (body) values (?)');
      for (let i = 0; i < 100; i++) statement.run(Buffer.alloc(4000, i));
    });
  const walBytes = () => statSync(`${path}-wal`).size;

  it('keeps the log short while the writer never checkpoints at its own commit', async () => {
    const checkpointer = startWalCheckpointer(writer, path, 25);
    try {
      // The log is judged from the worker's first checkpoint on: before it (a thread and an addon
      // loading on a busy machine) the log grows under the backstop, and never shrinks after.
      await checkpointer.started;
      expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(BACKSTOP_PAGES);
      const commit = insert(writer);
      for (let round = 0; round < 20; round++) {
        commit();
        await pause(60);
      }
      // 2,000 rows of 4 kB went through the log (8 MB); a writer left alone below its backstop
      // would hold all of it. The worker copies each batch out, so the log restarts each time.
      expect(writer.prepare('select count(*) from scratch').pluck().get()).toBe(2000);
      expect(walBytes()).toBeLessThan(2 * 2 ** 20);
    } finally {
      await checkpointer.stop();
    }
    // Stopped: nothing copies the log any more, so it grows with every commit.
    const before = walBytes();
    const commit = insert(writer);
    for (let round = 0; round < 10; round++) {
      commit();
      await pause(60);
    }
    expect(walBytes()).toBeGreaterThan(before + 2 * 2 ** 20);
  });

  it('gives the writer back its own checkpoints when the worker fails', async () => {
    writer.pragma('wal_autocheckpoint = 777');
    const checkpointer = startWalCheckpointer(writer, join(dir, 'missing.db'), 25);
    await checkpointer.stop();
    expect(writer.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });
});

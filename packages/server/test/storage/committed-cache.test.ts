/**
 * A read kept by CommittedCache must never outlive a commit: one by this server's connection
 * at once, one by another process on the same file from the next turn of the event loop (the
 * commit counter is read once per turn while this process writes nothing); on PostgreSQL
 * nothing is kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommittedCache } from '../../src/storage/committed-cache.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { committedVersion } from '../../src/storage/sqlite-statements.js';
import { backend, freshDatabase, type TestDatabase } from '../harness.js';

describe('CommittedCache', () => {
  let database: TestDatabase;
  /** A second process's view of the same database (an operator's `warren keys set-limit`). */
  let other: Storage;
  let next = 0;
  /** The next turn of the event loop, in which another process's commit shows. */
  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  const commit = (storage: Storage) =>
    storage.db
      .insertInto('networks')
      .values({ id: `net_${next++}`, name: 'n', plan: 'free', created_at: 1, next_addr_index: 1, netmap_epoch: 0 })
      .execute();

  beforeAll(async () => {
    database = await freshDatabase();
    other = await openStorage(database.url, { schema: database.schema });
  });
  afterAll(async () => {
    await other.close();
    await database.drop();
  });

  it.runIf(backend === 'sqlite')('reads a commit counter that moves with every commit, by any connection', async () => {
    const { db } = database.storage;
    const start = committedVersion(db)!;
    expect(start).toEqual(expect.any(Number));
    expect(committedVersion(db)).toBe(start);
    // This connection's commit shows at once, in the same turn.
    await commit(database.storage);
    const afterOwn = committedVersion(db)!;
    expect(afterOwn).not.toBe(start);
    await commit(other);
    await nextTurn();
    expect(committedVersion(db)).not.toBe(afterOwn);
    // A read commits nothing.
    const beforeRead = committedVersion(db);
    await db.selectFrom('networks').selectAll().execute();
    await other.db.selectFrom('networks').selectAll().execute();
    expect(committedVersion(db)).toBe(beforeRead);
  });

  it('loads once while nothing commits, and again after any commit', async () => {
    const cache = new CommittedCache<string>();
    let loads = 0;
    const get = () => cache.get(database.storage.db, 'k', async () => `v${++loads}`);
    expect(await get()).toBe('v1');
    // PostgreSQL's instances commit without telling each other: every call loads there.
    const kept = backend === 'sqlite';
    expect(await get()).toBe(kept ? 'v1' : 'v2');
    await commit(other);
    await nextTurn();
    const afterOther = await get();
    expect(afterOther).toBe(kept ? 'v2' : 'v3');
    await commit(database.storage);
    expect(await get()).not.toBe(afterOther);
  });

  it('never keeps "not found"', async () => {
    const cache = new CommittedCache<string>();
    let loads = 0;
    const notFound = async () => {
      loads++;
      return undefined;
    };
    const db = database.storage.db;
    expect(await cache.get(db, 'missing', notFound)).toBeUndefined();
    expect(await cache.get(db, 'missing', notFound)).toBeUndefined();
    expect(loads).toBe(2);
  });

  it('does not serve a value loaded while another process committed, once the commit shows', async () => {
    // The load sees a commit land after the version was read: the value may predate it or not,
    // but the next call reads a newer version and loads again.
    const cache = new CommittedCache<string>();
    const db = database.storage.db;
    await cache.get(db, 'raced', async () => {
      await commit(other);
      return 'during';
    });
    await nextTurn();
    expect(await cache.get(db, 'raced', async () => 'after')).toBe('after');
  });

  it.runIf(backend === 'sqlite')('starts over once it holds its capacity', async () => {
    const cache = new CommittedCache<number>(2);
    const db = database.storage.db;
    let loads = 0;
    for (const key of ['a', 'b', 'c', 'a']) await cache.get(db, key, async () => ++loads);
    // a, b kept; c empties the cache first; a is loaded again.
    expect(loads).toBe(4);
  });
});

/**
 * Reads kept for as long as nothing commits. Every API call looks its key up, and on SQLite
 * that lookup was a twelfth of a call's time; a key's row changes only by a commit, so the row
 * read once is the row until the database's commit counter moves (sqlite-statements.ts), and
 * the check of that counter costs a third of the lookup. Any commit, of anything, empties the
 * cache: a revocation, a new limit or a deletion is seen by the very next call, from this
 * process or another one on the same file.
 *
 * Where the database has no such counter (PostgreSQL, whose instances commit independently;
 * an in-memory SQLite database) every call loads.
 */
import type { Db } from './database.js';
import { committedVersion } from './sqlite-statements.js';

interface Kept<V> {
  version: number;
  entries: Map<string, V>;
}

export class CommittedCache<V> {
  private readonly byDatabase = new WeakMap<Db, Kept<V>>();

  /** `capacity` bounds what one database keeps; past it the cache starts over. */
  constructor(private readonly capacity = 1024) {}

  /**
   * The value under `key` if it is kept and nothing has committed since, without a promise;
   * undefined otherwise (the caller then takes `get`).
   */
  peek(db: Db, key: string): V | undefined {
    const version = committedVersion(db);
    if (version === undefined) return undefined;
    const kept = this.byDatabase.get(db);
    return kept?.version === version ? kept.entries.get(key) : undefined;
  }

  /** The value under `key`, loaded when not kept; undefined (not found) is never kept. */
  async get(db: Db, key: string, load: () => Promise<V | undefined>): Promise<V | undefined> {
    const version = committedVersion(db);
    if (version === undefined) return load();
    let kept = this.byDatabase.get(db);
    if (kept?.version !== version) {
      kept = { version, entries: new Map() };
      this.byDatabase.set(db, kept);
    }
    const cached = kept.entries.get(key);
    if (cached !== undefined) return cached;
    const value = await load();
    // Loaded after the version was read, so at least that new. Kept under that version: if
    // something committed during the load, the version has moved, and no later call reads
    // this entry (versions only grow).
    if (value !== undefined) {
      if (kept.entries.size >= this.capacity) kept.entries.clear();
      kept.entries.set(key, value);
    }
    return value;
  }
}

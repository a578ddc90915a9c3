/**
 * Writes that go to the database in batches per key, for writes that serialise on a lock per
 * key anyway (a network's presence epoch, its connection log): the first write of a key starts
 * at once, and those arriving while it is in flight go together in the next one, at most
 * `maxBatch` at a time. An uncontended write costs what it did alone; under a burst, a key
 * costs one transaction per round trip instead of one per caller, and callers no longer hold
 * pooled connections while they queue on the lock.
 *
 * Queues are kept per database handle (two instances in one process keep their own, as two
 * processes would) and dropped when they empty. When a batch's write fails, every caller in it
 * gets the error.
 */
import { innerMap } from './nested-maps.js';

interface Waiting<T, R> {
  item: T;
  resolve(result: R): void;
  reject(error: unknown): void;
}

interface Queue<T, R> {
  waiting: Waiting<T, R>[];
  writing: boolean;
}

/**
 * `write(db, key, items)` stores the items and resolves to one result per item, in order. The
 * function returned queues one item and resolves to its result.
 */
export function batchedWrites<D extends object, T, R>(
  write: (db: D, key: string, items: readonly T[]) => Promise<readonly R[]>,
  maxBatch: number,
): (db: D, key: string, item: T) => Promise<R> {
  const queues = new WeakMap<D, Map<string, Queue<T, R>>>();

  const drain = async (db: D, key: string, queue: Queue<T, R>, ofDb: Map<string, Queue<T, R>>) => {
    queue.writing = true;
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0, maxBatch);
      try {
        const results = await write(
          db,
          key,
          batch.map((waiting) => waiting.item),
        );
        for (let i = 0; i < batch.length; i++) batch[i]!.resolve(results[i] as R);
      } catch (error) {
        for (const waiting of batch) waiting.reject(error);
      }
    }
    queue.writing = false;
    ofDb.delete(key);
  };

  return (db, key, item) => {
    const ofDb = innerMap(queues, db, Map);
    let queue = ofDb.get(key);
    if (!queue) {
      queue = { waiting: [], writing: false };
      ofDb.set(key, queue);
    }
    const target = queue;
    return new Promise<R>((resolve, reject) => {
      target.waiting.push({ item, resolve, reject });
      if (!target.writing) void drain(db, key, target, ofDb);
    });
  };
}

import { describe, expect, it } from 'vitest';
import { batchedWrites } from '../../src/lib/write-batches.js';

/** A write that records each batch it was given and waits until the test lets it finish. */
function recordingWrite() {
  const batches: { db: object; key: string; items: number[] }[] = [];
  const pending: (() => void)[] = [];
  let failNext = false;
  const write = async (db: object, key: string, items: readonly number[]) => {
    batches.push({ db, key, items: [...items] });
    const fail = failNext;
    failNext = false;
    await new Promise<void>((resolve) => pending.push(resolve));
    if (fail) throw new Error('write failed');
    return items.map((item) => item * 10);
  };
  /** Lets every write in flight finish, then waits for the batches they start. */
  const finish = async () => {
    for (const resolve of pending.splice(0)) resolve();
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { write, batches, finish, failOnce: () => (failNext = true) };
}

describe('batched writes', () => {
  it('writes the first at once and those queued meanwhile together, each answered with its own result', async () => {
    const { write, batches, finish } = recordingWrite();
    const queue = batchedWrites(write, 100);
    const db = {};
    const results = [1, 2, 3, 4].map((n) => queue(db, 'net', n));
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    await finish();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    await finish();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
    // Drained: the next one starts at once again.
    const later = queue(db, 'net', 5);
    expect(batches.at(-1)?.items).toEqual([5]);
    await finish();
    expect(await later).toBe(50);
  });

  it('keeps keys and databases apart: each has its own write in flight', async () => {
    const { write, batches, finish } = recordingWrite();
    const queue = batchedWrites(write, 100);
    const [one, two] = [{}, {}];
    const results = [queue(one, 'a', 1), queue(one, 'b', 2), queue(two, 'a', 3), queue(one, 'a', 4)];
    expect(batches.map((b) => [b.db === one ? 'one' : 'two', b.key, b.items])).toEqual([
      ['one', 'a', [1]],
      ['one', 'b', [2]],
      ['two', 'a', [3]],
    ]);
    await finish();
    await finish();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
  });

  it('takes at most maxBatch at a time, in the order they came', async () => {
    const { write, batches, finish } = recordingWrite();
    const queue = batchedWrites(write, 2);
    const db = {};
    const results = [1, 2, 3, 4, 5, 6].map((n) => queue(db, 'k', n));
    for (let i = 0; i < 4; i++) await finish();
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50, 60]);
  });

  it('fails every caller of a failed batch, and goes on with the next', async () => {
    const { write, batches, finish, failOnce } = recordingWrite();
    const queue = batchedWrites(write, 100);
    const db = {};
    const first = queue(db, 'k', 1);
    failOnce();
    const failing = [queue(db, 'k', 2), queue(db, 'k', 3)];
    const settled = Promise.allSettled(failing);
    await finish();
    const after = queue(db, 'k', 4);
    await finish();
    await finish();
    expect(await first).toBe(10);
    expect((await settled).map((s) => s.status)).toEqual(['rejected', 'rejected']);
    expect(await after).toBe(40);
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3], [4]]);
  });
});

/**
 * The limiter itself, on the backend under test, with a clock the test moves: exact at the
 * window's edge, counts hits within one millisecond, and reports what the headers need; on
 * PostgreSQL, hits that arrive together are counted as one group and still decided exactly.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RateLimiter } from '../../src/core/context.js';
import {
  type HitManyRow,
  type HitRow,
  MemoryRateLimiter,
  PostgresRateLimiter,
  WINDOW_MS,
} from '../../src/edge/rate-limiter.js';
import { openStorage } from '../../src/storage/database.js';
import { backend, freshDatabase, TestClock, type TestDatabase } from '../harness.js';

describe('sliding-window rate limiter', () => {
  let database: TestDatabase;
  const clock = new TestClock(1_800_000_000_000);
  let limiter: RateLimiter;
  beforeAll(async () => {
    database = await freshDatabase();
    const { db, dialect } = database.storage;
    limiter = dialect === 'postgres' ? new PostgresRateLimiter(db, clock) : new MemoryRateLimiter(clock);
  });
  afterAll(async () => {
    limiter.close();
    await database.drop();
  });

  const hits = async (bucket: string, limit: number, count: number) => {
    const decisions = [];
    for (let i = 0; i < count; i++) decisions.push(await limiter.hit(bucket, limit));
    return decisions;
  };

  it('refuses the hit past the limit inside one millisecond, and counts only the allowed ones', async () => {
    const decisions = await hits('same-ms', 3, 5);
    expect(decisions.map((d) => d.allowed)).toEqual([true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
    expect(decisions[3]).toMatchObject({ limit: 3, resetSeconds: 60 });
  });

  it('frees each slot exactly 60 s after it was taken, not a millisecond sooner', async () => {
    const start = clock.now();
    await hits('edge', 3, 2); // two hits at t=0
    clock.advance(20_000);
    await hits('edge', 3, 1); // one at t=20s
    clock.ms = start + 59_999;
    expect((await limiter.hit('edge', 3)).allowed).toBe(false);
    clock.ms = start + 60_000; // the two hits of t=0 leave the window together
    const [first, second, third] = await hits('edge', 3, 3);
    expect([first?.allowed, second?.allowed, third?.allowed]).toEqual([true, true, false]);
    expect(third?.resetSeconds).toBe(20); // the hit of t=20s frees the next slot
    clock.ms = start + 80_000;
    expect((await limiter.hit('edge', 3)).allowed).toBe(true);
  });

  it('keeps buckets apart', async () => {
    await hits('a', 1, 1);
    expect((await limiter.hit('a', 1)).allowed).toBe(false);
    expect((await limiter.hit('b', 1)).allowed).toBe(true);
  });

  it.runIf(backend === 'postgres')('leaves the connection committing synchronously after a hit', async () => {
    // The limiter's own commit is asynchronous; that must end with its transaction, or every
    // later commit on the pooled connection (netmap versions, keys) would lose its durability.
    const single = await openStorage(database.url, { schema: database.schema, poolSize: 1 });
    const own = new PostgresRateLimiter(single.db, clock);
    try {
      expect((await own.hit('durability', 5)).allowed).toBe(true);
      const { rows } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(single.db);
      expect(rows[0]!.synchronous_commit).toBe('on');
    } finally {
      own.close();
      await single.close();
    }
  });

  it.runIf(backend === 'postgres')('counts hits racing on many connections of two instances exactly', async () => {
    // Without the bucket's lock, hits whose statements overlap each decide from the same total.
    const pools = await Promise.all(
      [0, 1].map(() => openStorage(database.url, { schema: database.schema, poolSize: 8 })),
    );
    const limiters = pools.map((storage) => new PostgresRateLimiter(storage.db, clock));
    try {
      for (const round of [1, 2, 3]) {
        const decisions = await Promise.all(
          Array.from({ length: 64 }, (_, i) => limiters[i % 2]!.hit(`race-${round}`, 10)),
        );
        expect(decisions.filter((d) => d.allowed)).toHaveLength(10);
        expect(
          decisions
            .filter((d) => d.allowed)
            .map((d) => d.remaining)
            .sort((a, b) => a - b),
        ).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      }
    } finally {
      for (const limiter of limiters) limiter.close();
      await Promise.all(pools.map((storage) => storage.close()));
    }
  });

  it('takes any text as a bucket name, quotes and backslashes included', async () => {
    // Bucket names carry client input (an address); on PostgreSQL they are written into the
    // statement as literals, so one that looks like SQL must stay a name.
    const odd = "addr:'); delete from rate_limit_buckets; --\\'";
    const similar = "addr:'); delete from rate_limit_buckets; --";
    await hits(odd, 2, 2);
    expect((await limiter.hit(odd, 2)).allowed).toBe(false);
    expect((await limiter.hit(similar, 2)).remaining).toBe(1);
    expect((await limiter.hit('a', 1)).allowed).toBe(false);
  });

  it.runIf(backend === 'postgres')('decides hits arriving together in arrival order, exactly', async () => {
    // While one call for the bucket is in flight, the others queue and go as one group: the
    // first 100 must be allowed in the order they came, each seeing the ones before it.
    const decisions = await Promise.all(Array.from({ length: 200 }, () => limiter.hit('together', 100)));
    expect(decisions.slice(0, 100).map((d) => d.allowed)).toEqual(Array(100).fill(true));
    expect(decisions.slice(0, 100).map((d) => d.remaining)).toEqual(Array.from({ length: 100 }, (_, i) => 99 - i));
    expect(decisions.slice(100).every((d) => !d.allowed && d.remaining === 0 && d.resetSeconds === 60)).toBe(true);
  });

  it.runIf(backend === 'postgres')('shares one exact budget between instances grouping hits on their own', async () => {
    const pools = await Promise.all(
      [0, 1].map(() => openStorage(database.url, { schema: database.schema, poolSize: 4 })),
    );
    const limiters = pools.map((storage) => new PostgresRateLimiter(storage.db, clock));
    try {
      const decisions = await Promise.all(
        Array.from({ length: 300 }, (_, i) => limiters[i % 2]!.hit('shared-groups', 100)),
      );
      const allowed = decisions.filter((d) => d.allowed);
      expect(allowed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 100 }, (_, i) => i));
      // Each instance's own hits are decided in its order: none allowed after one it refused.
      for (const own of [0, 1]) {
        const mine = decisions.filter((_, i) => i % 2 === own).map((d) => d.allowed);
        expect(mine.indexOf(false) === -1 || !mine.slice(mine.indexOf(false)).includes(true)).toBe(true);
      }
    } finally {
      for (const limiter of limiters) limiter.close();
      await Promise.all(pools.map((storage) => storage.close()));
    }
  });

  it.runIf(backend === 'postgres')(
    'splits a group that straddles the limit, and counts only its allowed hits',
    async () => {
      const start = clock.now();
      for (let i = 0; i < 96; i++) await limiter.hit('straddle', 100);
      clock.advance(10_000);
      const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.hit('straddle', 100)));
      expect(decisions.map((d) => d.allowed)).toEqual([...Array(4).fill(true), ...Array(6).fill(false)]);
      expect(decisions.map((d) => d.remaining)).toEqual([3, 2, 1, 0, 0, 0, 0, 0, 0, 0]);
      // Refused until the 96 hits of the first second leave, 50 s on.
      expect(decisions.slice(4).map((d) => d.resetSeconds)).toEqual(Array(6).fill(50));
      clock.ms = start + WINDOW_MS;
      // The 96 have left; the 4 allowed hits of the group are all that is live.
      expect(await limiter.hit('straddle', 100)).toMatchObject({ allowed: true, remaining: 95, resetSeconds: 10 });
    },
  );

  it.runIf(backend === 'postgres')(
    'fails every hit of a group whose call fails, and still sends the group queued behind it',
    async () => {
      // A limit that is not an integer fails the call in the database (its parameter is a
      // bigint). Groups of a bucket are split by limit, so while the first hit's call is in
      // flight the next five (same broken limit) queue as one group and the five after them
      // (a valid limit) as the next: each failed call must reject its own hits, and the bucket
      // must go on to its next group. A failure left unhandled leaves them all waiting.
      const bucket = 'recovers';
      const first = limiter.hit(bucket, 1.5);
      const broken = Array.from({ length: 5 }, () => limiter.hit(bucket, 1.5));
      const after = Array.from({ length: 5 }, () => limiter.hit(bucket, 100));
      const outcomes = await Promise.allSettled([first, ...broken]);
      expect(outcomes.map((o) => o.status)).toEqual(Array(6).fill('rejected'));
      const decisions = await Promise.all(after);
      expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 99],
        [true, 98],
        [true, 97],
        [true, 96],
        [true, 95],
      ]);
      // Nothing of the failed calls was counted, and the bucket takes hits on its own again.
      expect(await limiter.hit(bucket, 100)).toMatchObject({ allowed: true, remaining: 94 });
    },
    10_000,
  );

  it.runIf(backend === 'postgres')(
    "updates a bucket's row in place (HOT), so a busy key leaves no index entries behind",
    async () => {
      // Every hit moves the row's `last_at`: an index on it would make every update a new
      // version with new index entries (migration 036). The counters of the transaction's own
      // statements are read inside it, where they are exact, not from the asynchronous ones.
      const counts = await database.storage.db.transaction().execute(async (trx) => {
        const start = clock.now();
        for (let i = 0; i < 20; i++) {
          const now = start + i;
          await sql`select * from rate_limit_hit_many('hot', ${now}, ${now - WINDOW_MS}, 1000, 1)`.execute(trx);
        }
        const { rows } = await sql<{ updates: string; hot: string }>`
        select n_tup_upd as updates, n_tup_hot_upd as hot
        from pg_stat_xact_user_tables where relname = 'rate_limit_buckets'`.execute(trx);
        return rows[0]!;
      });
      // The first hit inserts the row; the others update it, each at a new millisecond.
      expect(Number(counts.updates)).toBeGreaterThanOrEqual(19);
      expect(Number(counts.hot)).toBe(Number(counts.updates));
    },
  );

  it.runIf(backend === 'postgres')(
    "reads none of the slots deleted before: a hit's delete starts where the last one stopped",
    async () => {
      // Deleted slots stay in the table and its primary key until a vacuum, and neither the
      // bitmap scan nor the sequential scan PostgreSQL picks for `at <= cutoff` marks them dead:
      // that delete walked all of them on every hit (migration 037). The blocks a call reads are
      // the whole call's, the function's statements included, so a bucket just cleared of 10,000
      // slots is compared with one that never had any.
      const db = database.storage.db;
      const blocksOfCall = async (bucket: string, now: number): Promise<number> => {
        const { rows } = await sql<{ 'QUERY PLAN': [{ Plan: Record<string, number> }] }>`
          explain (analyze, buffers, format json)
          select * from rate_limit_hit_many(${bucket}, ${now}, ${now - WINDOW_MS}, 1000000, 1)`.execute(db);
        const plan = rows[0]!['QUERY PLAN'][0].Plan;
        return plan['Shared Hit Blocks']! + plan['Shared Read Blocks']!;
      };
      const start = clock.now() + 1_000_000;
      const slots = 10_000;
      await sql`insert into rate_limit_slots (bucket, at, hits)
        select 'cleared', ${start}::bigint + i, 1 from generate_series(0, ${slots - 1}) i`.execute(db);
      await sql`insert into rate_limit_buckets (bucket, total, last_at)
        values ('cleared', ${slots}, ${start + slots - 1})`.execute(db);
      // Every slot leaves the window in this hit.
      const [row] = (
        await sql<{ out_live: number }>`select * from rate_limit_hit_many('cleared', ${start + WINDOW_MS + slots - 1},
          ${start + slots - 1}, 1000000, 1)`.execute(db)
      ).rows;
      expect(row!.out_live).toBe(0);
      await sql`select * from rate_limit_hit_many('never', ${start}, ${start - WINDOW_MS}, 1000000, 1)`.execute(db);
      const at = start + WINDOW_MS + slots;
      const cleared = await blocksOfCall('cleared', at);
      const never = await blocksOfCall('never', at - WINDOW_MS + 1);
      // Both read 17–19 blocks; without the mark the cleared bucket's call read 151. The two
      // may differ by a page or two of where their entries sit.
      expect(cleared).toBeLessThanOrEqual(never + 4);
    },
  );

  it.runIf(backend === 'postgres')(
    'decides as the plain delete of every expired slot did, whatever order the clocks of the calls come in',
    async () => {
      // The reference is what each call did before the mark (migration 027): delete every slot
      // at or before its cutoff, count the rest. Calls come from clocks that disagree by a few
      // seconds or by more than a window, the one-hit function and the group one in turn, and
      // the slots left in the table at the end must be the reference's own.
      const db = database.storage.db;
      const call = fc.record({
        step: fc.oneof(
          fc.integer({ min: 0, max: 3_000 }),
          fc.integer({ min: -5_000, max: 0 }),
          fc.integer({ min: -130_000, max: 130_000 }),
        ),
        count: fc.integer({ min: 1, max: 4 }),
        single: fc.boolean(),
      });
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 12 }),
          fc.array(call, { minLength: 5, maxLength: 40 }),
          async (limit, calls) => {
            const bucket = `skew-${run++}`;
            const reference = new Map<number, number>();
            let now = clock.now();
            for (const { step, count, single } of calls) {
              now += step;
              const cutoff = now - WINDOW_MS;
              for (const at of reference.keys()) if (at <= cutoff) reference.delete(at);
              const live = [...reference.values()].reduce((sum, hits) => sum + hits, 0);
              const oldest = reference.size > 0 ? Math.min(...reference.keys()) : null;
              const allowed = Math.max(0, Math.min(single ? 1 : count, limit - live));
              if (allowed > 0) reference.set(now, (reference.get(now) ?? 0) + allowed);
              const { rows } = single
                ? await sql<HitRow>`select * from rate_limit_hit(${bucket}, ${now}, ${cutoff}, ${limit})`.execute(db)
                : await sql<HitManyRow>`select * from rate_limit_hit_many(${bucket}, ${now}, ${cutoff}, ${limit}, ${count})`.execute(
                    db,
                  );
              const got = rows[0]!;
              expect([Number(got.out_live), got.out_oldest == null ? null : Number(got.out_oldest)]).toEqual([
                live,
                oldest,
              ]);
              expect(got.out_allowed).toBe(single ? allowed > 0 : allowed);
            }
            const { rows } = await sql<{ at: number; hits: number }>`
            select at, hits from rate_limit_slots where bucket = ${bucket} order by at`.execute(db);
            expect(rows.map((r) => [Number(r.at), Number(r.hits)])).toEqual([...reference].sort(([a], [b]) => a - b));
          },
        ),
        { numRuns: 60 },
      );
    },
    60_000,
  );

  it.runIf(backend === 'postgres')(
    'frees the hit of an instance a whole window behind when the others move on',
    async () => {
      // The slower instance counts its hit at a time the faster one has already swept past: the
      // next hit of the faster one must drop that slot, as it drops any slot out of its window,
      // not keep it in the total for as long as the bucket is busy.
      const slowClock = new TestClock(clock.now() - 90_000);
      const slow = new PostgresRateLimiter(database.storage.db, slowClock);
      try {
        expect(await limiter.hit('behind', 3)).toMatchObject({ allowed: true, remaining: 2 });
        expect(await slow.hit('behind', 3)).toMatchObject({ allowed: true, remaining: 1 });
        clock.advance(1);
        expect(await limiter.hit('behind', 3)).toMatchObject({ allowed: true, remaining: 1 });
        clock.advance(1);
        expect(await limiter.hit('behind', 3)).toMatchObject({ allowed: true, remaining: 0 });
        expect((await limiter.hit('behind', 3)).allowed).toBe(false);
      } finally {
        slow.close();
      }
    },
  );

  it('counts a large limit exactly across many slots', async () => {
    clock.advance(120_000);
    const start = clock.now();
    for (let i = 0; i < 300; i++) {
      await limiter.hit('large', 1_000_000);
      clock.advance(100);
    }
    // 300 hits 100 ms apart span 30 s: all live; 30 s later the first half has left.
    expect((await limiter.hit('large', 1_000_000)).remaining).toBe(1_000_000 - 301);
    clock.ms = start + 60_000 + 14_950;
    expect((await limiter.hit('large', 1_000_000)).remaining).toBe(1_000_000 - (301 - 150 + 1));
  });
});

describe('in-memory sliding window', () => {
  it('decides as a plain list of the last minute’s hits would, through growth and wrap-around', async () => {
    // Sequences long enough to grow the ring past its first 16 slots and wrap it many times.
    const step = fc.record({ advance: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 3_000 })), hits: fc.nat(3) });
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 60 }),
        fc.array(step, { minLength: 50, maxLength: 300 }),
        async (limit, steps) => {
          const clock = new TestClock(1_800_000_000_000);
          const limiter = new MemoryRateLimiter(clock);
          const taken: number[] = [];
          try {
            for (const { advance, hits } of steps) {
              clock.advance(advance);
              for (let i = 0; i < hits; i++) {
                const now = clock.now();
                const live = taken.filter((at) => at > now - WINDOW_MS);
                const allowed = live.length < limit;
                if (allowed) taken.push(now);
                const oldest = live[0] ?? (allowed ? now : undefined);
                const decision = await limiter.hit('key', limit);
                expect(decision.allowed).toBe(allowed);
                expect(decision.remaining).toBe(Math.max(0, limit - live.length - (allowed ? 1 : 0)));
                const reset = oldest === undefined ? 0 : Math.ceil((oldest + WINDOW_MS - now) / 1000);
                expect(decision.resetSeconds).toBe(allowed ? reset : Math.max(1, reset));
              }
            }
          } finally {
            limiter.close();
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

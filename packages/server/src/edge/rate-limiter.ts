/**
 * Sliding-window rate limiter: at most `limit` hits in ANY 60-second window, so the 101st
 * request inside a minute is refused however the requests are spread (a fixed window would let
 * 200 through across a boundary, which is why the counting is our own).
 *
 * Hits are counted per millisecond slot (the clock's resolution, so nothing is approximated)
 * beside a running total of the live slots: a request adds to one slot and drops the slots
 * that left the window, each exactly once, so its cost does not grow with the key's limit.
 *
 * SQLite is served by one process, so its counters live in memory; on PostgreSQL several
 * instances share one budget, so the slots live in the database, serialised per bucket by
 * an advisory lock. Each process keeps one call per bucket in flight and counts the hits that
 * arrive meanwhile together in the next (group commit), so a busy key costs the database one
 * locked call per round trip, not one per request waiting in the lock's queue.
 */
import { sql } from 'kysely';
import type { RateLimitDecision, RateLimiter } from '../core/context.js';
import type { Clock } from '../lib/time.js';
import type { Db } from '../storage/database.js';
import { runPrepared } from '../storage/pg-statements.js';

export const WINDOW_MS = 60_000;

function decide(
  hits: number,
  oldest: number | undefined,
  limit: number,
  now: number,
  allowed: boolean,
): RateLimitDecision {
  const reset = oldest === undefined ? 0 : Math.max(0, oldest + WINDOW_MS - now);
  return {
    allowed,
    limit,
    remaining: Math.max(0, limit - hits),
    resetSeconds: allowed ? Math.ceil(reset / 1000) : Math.max(1, Math.ceil(reset / 1000)),
  };
}

/**
 * One bucket's live hits: per-millisecond slots in arrival order, in a ring of typed arrays
 * that doubles when full. Expiring advances the head; nothing is copied per hit or per expiry
 * (the arrays it replaced were sliced every time half of them had expired, a copy of the whole
 * window that made a busy key's hits cost twice an idle one's).
 */
class SlidingWindow {
  private ats = new Float64Array(16);
  private counts = new Uint32Array(16);
  /** Index of the oldest live slot, and how many slots are live. */
  private head = 0;
  private size = 0;
  total = 0;

  /** Drops the slots at or before `cutoff`. */
  expire(cutoff: number): void {
    while (this.size > 0 && this.ats[this.head]! <= cutoff) {
      this.total -= this.counts[this.head]!;
      this.head = (this.head + 1) % this.ats.length;
      this.size--;
    }
  }

  add(at: number): void {
    if (this.size > 0) {
      const last = (this.head + this.size - 1) % this.ats.length;
      if (this.ats[last] === at) {
        this.counts[last]!++;
        this.total++;
        return;
      }
    }
    if (this.size === this.ats.length) this.grow();
    const slot = (this.head + this.size) % this.ats.length;
    this.ats[slot] = at;
    this.counts[slot] = 1;
    this.size++;
    this.total++;
  }

  get oldest(): number | undefined {
    return this.size > 0 ? this.ats[this.head] : undefined;
  }

  get newest(): number | undefined {
    return this.size > 0 ? this.ats[(this.head + this.size - 1) % this.ats.length] : undefined;
  }

  /** Twice the room, the live slots moved to the front in order. */
  private grow(): void {
    const ats = new Float64Array(this.ats.length * 2);
    const counts = new Uint32Array(this.counts.length * 2);
    for (let i = 0; i < this.size; i++) {
      const from = (this.head + i) % this.ats.length;
      ats[i] = this.ats[from]!;
      counts[i] = this.counts[from]!;
    }
    this.ats = ats;
    this.counts = counts;
    this.head = 0;
  }
}

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, SlidingWindow>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {
    this.sweeper = setInterval(() => this.sweep(), WINDOW_MS).unref();
  }

  async hit(bucket: string, limit: number): Promise<RateLimitDecision> {
    return this.hitNow(bucket, limit);
  }

  hitNow(bucket: string, limit: number): RateLimitDecision {
    const now = this.clock.now();
    let window = this.buckets.get(bucket);
    if (!window) {
      window = new SlidingWindow();
      this.buckets.set(bucket, window);
    }
    window.expire(now - WINDOW_MS);
    const allowed = window.total < limit;
    if (allowed) window.add(now);
    return decide(window.total, window.oldest, limit, now, allowed);
  }

  private sweep(): void {
    const cutoff = this.clock.now() - WINDOW_MS;
    for (const [bucket, window] of this.buckets) {
      const newest = window.newest;
      if (newest === undefined || newest <= cutoff) this.buckets.delete(bucket);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

/**
 * The row of `rate_limit_hit` (migration 015), one hit, which the node credential check embeds
 * in its own statement; its OUT names shadow no column of the function's statements.
 */
export interface HitRow {
  out_live: number;
  out_oldest: number | null;
  out_allowed: boolean;
}

/** The decision of a hit that `rate_limit_hit` counted at `now` (its row as returned). */
export function decisionOfHit(row: HitRow | undefined, limit: number, now: number): RateLimitDecision {
  const live = Number(row?.out_live ?? 0);
  const allowed = row?.out_allowed ?? true;
  const oldest = row?.out_oldest == null ? (allowed ? now : undefined) : Number(row.out_oldest);
  return decide(allowed ? live + 1 : live, oldest, limit, now, allowed);
}

/** A group of hits on PostgreSQL (migration 027). */
const HIT_MANY = 'select * from rate_limit_hit_many($1, $2, $3, $4, $5)';
/** The row of `rate_limit_hit_many`, which the API key check embeds in its own statement too. */
export interface HitManyRow {
  out_live: number | string;
  out_oldest: number | string | null;
  out_allowed: number | string;
}

/** A hit waiting for its bucket's call. */
interface PendingHit {
  limit: number;
  resolve: (decision: RateLimitDecision) => void;
  reject: (error: unknown) => void;
}

/**
 * The decisions of `count` hits counted together at `now`, in arrival order: with `live` hits
 * in the window before them, the first `allowed` are allowed, each seeing the ones before it,
 * and the rest are refused until the oldest live slot (or, if there was none, this group's)
 * leaves the window.
 */
export function decisionsOfGroup(
  row: HitManyRow | undefined,
  count: number,
  limit: number,
  now: number,
): RateLimitDecision[] {
  const live = Number(row?.out_live ?? 0);
  const allowed = Number(row?.out_allowed ?? 0);
  const oldest = row?.out_oldest == null ? (allowed > 0 ? now : undefined) : Number(row.out_oldest);
  return Array.from({ length: count }, (_, i) =>
    i < allowed
      ? decide(live + i + 1, oldest ?? now, limit, now, true)
      : decide(live + allowed, oldest, limit, now, false),
  );
}

export class PostgresRateLimiter implements RateLimiter {
  private readonly sweeper: NodeJS.Timeout;
  /** Buckets with a call in flight, each with the hits that arrived since it was sent. */
  private readonly waiting = new Map<string, PendingHit[]>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    this.sweeper = setInterval(() => void this.sweep().catch(() => {}), WINDOW_MS).unref();
  }

  /**
   * A hit goes to the database at once when its bucket has no call in flight from this process;
   * otherwise it waits for that call to return and goes with every hit that arrived meanwhile,
   * as one call that counts them all (`rate_limit_hit_many`). Under load a key's requests then
   * meet the bucket's lock once per round trip instead of queueing on it one by one, and the
   * window stays exact: each group is decided under the lock from the live count, hits are
   * counted when their group is decided, and room is never taken for hits not yet made.
   */
  hit(bucket: string, limit: number): Promise<RateLimitDecision> {
    return new Promise((resolve, reject) => {
      const pending = { limit, resolve, reject };
      const queued = this.waiting.get(bucket);
      if (queued) {
        queued.push(pending);
        return;
      }
      this.waiting.set(bucket, []);
      void this.send(bucket, [pending]);
    });
  }

  /**
   * One round trip for a group of hits with the same limit: the function as a prepared statement,
   * in a transaction of its own. It takes the bucket's lock, then, in its next statement, drops
   * the bucket's expired slots (subtracting their hits from its total), decides, and records the
   * allowed hits. The bucket's row keeps how far its slots were dropped (migration 037), so the
   * drop reads only the slots that expired since, not the entries of every slot dropped before. The counting must follow the lock rather than share a statement with it: a
   * statement's snapshot is taken when it starts, so only one issued after the lock is held sees
   * the writes of the instance that held it before. The lock lasts until the commit.
   *
   * The commit returns before its log reaches the disk (asynchronous commit, for this
   * transaction only): the lock is then held for the statements alone, not for a flush, and a
   * crash of the database loses at most the last fraction of a second of hits, a budget briefly
   * too generous, never a wrong answer about anything else.
   *
   * A failed call fails every hit of its group; the hits queued behind it still get their call.
   */
  private async send(bucket: string, group: PendingHit[]): Promise<void> {
    const limit = group[0]!.limit;
    const now = this.clock.now();
    const cutoff = now - WINDOW_MS;
    try {
      const values = [bucket, now, cutoff, limit, group.length];
      const prepared = runPrepared(this.db, 'warren_rate_limit_hit_many', HIT_MANY, values);
      const rows = (
        prepared
          ? await prepared
          : (
              await sql`select * from rate_limit_hit_many(${bucket}, ${now}, ${cutoff}, ${limit}, ${group.length})`.execute(
                this.db,
              )
            ).rows
      ) as HitManyRow[];
      const decisions = decisionsOfGroup(rows[0], group.length, limit, now);
      for (const [i, pending] of group.entries()) pending.resolve(decisions[i]!);
    } catch (error) {
      for (const pending of group) pending.reject(error);
    }
    const queued = this.waiting.get(bucket)!;
    if (queued.length === 0) {
      this.waiting.delete(bucket);
      return;
    }
    // Hits keep their order; one group counts one limit (a key's limit changed mid-flight
    // leaves the hits under the new one for the next call).
    let size = 1;
    while (size < queued.length && queued[size]!.limit === queued[0]!.limit) size++;
    void this.send(bucket, queued.splice(0, size));
  }

  /**
   * Forgets buckets idle for a whole window, each under its own lock so no hit races it. The row
   * and the slots go together, so a bucket that comes back starts with neither slots nor a mark.
   */
  private async sweep(): Promise<void> {
    const cutoff = this.clock.now() - WINDOW_MS;
    const idle = await this.db
      .selectFrom('rate_limit_buckets')
      .select('bucket')
      .where('last_at', '<=', cutoff)
      .limit(1000)
      .execute();
    for (const { bucket } of idle) {
      await this.db.transaction().execute(async (trx) => {
        await sql`select pg_advisory_xact_lock(hashtextextended(${`rl:${bucket}`}, 0))`.execute(trx);
        const gone = await trx
          .deleteFrom('rate_limit_buckets')
          .where('bucket', '=', bucket)
          .where('last_at', '<=', cutoff)
          .executeTakeFirst();
        if (gone.numDeletedRows > 0n) await trx.deleteFrom('rate_limit_slots').where('bucket', '=', bucket).execute();
      });
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

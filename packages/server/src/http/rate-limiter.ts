/**
 * Sliding-window-log rate limiter: at most `limit` hits in ANY 60-second window, so the
 * 101st request inside a minute is refused however the requests are spread (a fixed window
 * would let 200 through across a boundary, which is why the counting is our own).
 *
 * SQLite is served by one process, so its counters live in memory; on PostgreSQL several
 * instances share one budget, so the hits live in the database, serialised per bucket by
 * an advisory lock.
 */
import { sql } from 'kysely';
import type { Clock } from '../lib/time.js';
import type { Db } from '../storage/database.js';

export const WINDOW_MS = 60_000;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until a slot frees up (≥ 1 when refused). */
  resetSeconds: number;
}

export interface RateLimiter {
  hit(bucket: string, limit: number): Promise<RateLimitDecision>;
  close(): void;
}

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

export class MemoryRateLimiter implements RateLimiter {
  private readonly buckets = new Map<string, number[]>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {
    this.sweeper = setInterval(() => this.sweep(), WINDOW_MS).unref();
  }

  async hit(bucket: string, limit: number): Promise<RateLimitDecision> {
    const now = this.clock.now();
    let hits = this.buckets.get(bucket);
    if (!hits) {
      hits = [];
      this.buckets.set(bucket, hits);
    }
    let expired = 0;
    while (expired < hits.length && (hits[expired] as number) <= now - WINDOW_MS) expired++;
    if (expired) hits.splice(0, expired);
    const allowed = hits.length < limit;
    if (allowed) hits.push(now);
    return decide(hits.length, hits[0], limit, now, allowed);
  }

  private sweep(): void {
    const cutoff = this.clock.now() - WINDOW_MS;
    for (const [bucket, hits] of this.buckets) {
      if (hits.length === 0 || (hits[hits.length - 1] as number) <= cutoff) this.buckets.delete(bucket);
    }
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

export class PostgresRateLimiter implements RateLimiter {
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    // Buckets that stop being used keep their last hits until swept.
    this.sweeper = setInterval(() => {
      void this.db
        .deleteFrom('rate_limit_hits')
        .where('at', '<=', this.clock.now() - WINDOW_MS)
        .execute()
        .catch(() => {});
    }, WINDOW_MS).unref();
  }

  /**
   * Four round trips: BEGIN, the bucket's lock, one statement that drops the bucket's
   * expired hits, counts the rest and records this hit when it is allowed, COMMIT. The
   * statement must follow the lock rather than share it: its snapshot is taken when it
   * starts, so only a statement issued after the lock is held sees the hits of the
   * instance that held it before.
   */
  async hit(bucket: string, limit: number): Promise<RateLimitDecision> {
    const now = this.clock.now();
    const cutoff = now - WINDOW_MS;
    return this.db.transaction().execute(async (trx) => {
      await sql`select pg_advisory_xact_lock(hashtextextended(${`rl:${bucket}`}, 0))`.execute(trx);
      const { rows } = await sql<{ hits: string; oldest: string | null }>`
        with expired as (
          delete from rate_limit_hits where bucket = ${bucket} and at <= ${cutoff}
        ), live as (
          select count(*) as hits, min(at) as oldest from rate_limit_hits where bucket = ${bucket} and at > ${cutoff}
        ), added as (
          insert into rate_limit_hits (bucket, at) select ${bucket}, ${now} from live where live.hits < ${limit}
        )
        select hits, oldest from live`.execute(trx);
      const hits = Number(rows[0]?.hits ?? 0);
      const allowed = hits < limit;
      const oldest = rows[0]?.oldest == null ? (allowed ? now : undefined) : Number(rows[0].oldest);
      return decide(allowed ? hits + 1 : hits, oldest, limit, now, allowed);
    });
  }

  close(): void {
    clearInterval(this.sweeper);
  }
}

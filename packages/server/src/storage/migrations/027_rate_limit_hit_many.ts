/**
 * PostgreSQL: `rate_limit_hit_many`, which counts a group of hits on one bucket in one call.
 * Each process sends one call per bucket at a time and gathers the hits that arrive meanwhile
 * (edge/rate-limiter.ts): one call per hit serialised every request made with a key behind
 * that bucket's advisory lock, so a busy key waited on the database's lock queue instead of
 * its CPU.
 *
 * It does what `rate_limit_hit` (migration 015, kept for the node credential check that embeds
 * it) does for one hit: the lock first, then the counting in the next statement so its snapshot
 * sees the last holder's commit, and an asynchronous commit. Of the `p_count` hits it allows
 * as many as the window has room for, all counted at `p_now`, and returns the live count
 * before them, the oldest live slot, and how many it allowed; the caller decides the group in
 * arrival order from that. Nothing is taken for hits not yet made, so another instance sharing
 * the bucket is never refused for room this one holds unused. SQLite counts in memory.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create function rate_limit_hit_many(p_bucket text, p_now bigint, p_cutoff bigint, p_limit bigint, p_count bigint)
    returns table (out_live bigint, out_oldest bigint, out_allowed bigint)
    language plpgsql volatile
    as $$
    begin
      perform set_config('synchronous_commit', 'off', true);
      perform pg_advisory_xact_lock(hashtextextended('rl:' || p_bucket, 0));
      return query
        with expired as (
          delete from rate_limit_slots s where s.bucket = p_bucket and s.at <= p_cutoff returning s.hits
        ), decided as (
          select state.live, state.oldest, greatest(0, least(p_count, p_limit - state.live)) as allowed from (
            select coalesce((select b.total from rate_limit_buckets b where b.bucket = p_bucket), 0)
                   - coalesce((select sum(e.hits) from expired e), 0) as live,
                   (select min(s.at) from rate_limit_slots s where s.bucket = p_bucket and s.at > p_cutoff) as oldest
          ) as state
        ), slot as (
          insert into rate_limit_slots as s (bucket, at, hits)
          select p_bucket, p_now, decided.allowed from decided where decided.allowed > 0
          on conflict (bucket, at) do update set hits = s.hits + excluded.hits
        ), total as (
          insert into rate_limit_buckets as b (bucket, total, last_at)
          select p_bucket, decided.live + decided.allowed, p_now from decided
          on conflict (bucket) do update set total = excluded.total, last_at = greatest(b.last_at, excluded.last_at)
        )
        select decided.live::bigint, decided.oldest::bigint, decided.allowed::bigint from decided;
    end
    $$`.execute(db);
}

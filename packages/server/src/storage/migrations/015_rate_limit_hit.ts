/**
 * PostgreSQL: a rate-limit hit as one function (`rate_limit_hit`), called as a prepared
 * statement. The hit was three statements sent as one simple-query message, which PostgreSQL
 * parsed and planned on every call: planning alone was two thirds of the limiter's time, on
 * every API and node call. PL/pgSQL keeps the plans of its statements per connection.
 *
 * What a hit does is unchanged (http/rate-limiter.ts): the commit does not wait for the disk;
 * the bucket's advisory lock is taken first, and the counting runs as the next statement, so its
 * snapshot (a volatile function takes one per statement) sees the last holder's commit. OUT
 * names are prefixed so that none of them shadows a column in the function's statements.
 * SQLite counts in memory and gets nothing.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create function rate_limit_hit(p_bucket text, p_now bigint, p_cutoff bigint, p_limit bigint)
    returns table (out_live bigint, out_oldest bigint, out_allowed boolean)
    language plpgsql volatile
    as $$
    begin
      perform set_config('synchronous_commit', 'off', true);
      perform pg_advisory_xact_lock(hashtextextended('rl:' || p_bucket, 0));
      return query
        with expired as (
          delete from rate_limit_slots s where s.bucket = p_bucket and s.at <= p_cutoff returning s.hits
        ), decided as (
          select state.live, state.oldest, state.live < p_limit as allowed from (
            select coalesce((select b.total from rate_limit_buckets b where b.bucket = p_bucket), 0)
                   - coalesce((select sum(e.hits) from expired e), 0) as live,
                   (select min(s.at) from rate_limit_slots s where s.bucket = p_bucket and s.at > p_cutoff) as oldest
          ) as state
        ), slot as (
          insert into rate_limit_slots as s (bucket, at, hits)
          select p_bucket, p_now, 1 from decided where decided.allowed
          on conflict (bucket, at) do update set hits = s.hits + 1
        ), total as (
          insert into rate_limit_buckets as b (bucket, total, last_at)
          select p_bucket, decided.live + case when decided.allowed then 1 else 0 end, p_now from decided
          on conflict (bucket) do update set total = excluded.total, last_at = greatest(b.last_at, excluded.last_at)
        )
        select decided.live::bigint, decided.oldest::bigint, decided.allowed from decided;
    end
    $$`.execute(db);
}

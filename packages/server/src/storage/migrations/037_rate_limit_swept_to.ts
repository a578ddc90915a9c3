/**
 * PostgreSQL: each bucket remembers how far its slots were deleted (`swept_to`), and a hit
 * deletes only the slots that left the window since, `at > swept_to and at <= cutoff`.
 *
 * The delete was `at <= cutoff`, which PostgreSQL runs as a bitmap scan of the slots' primary
 * key. A bitmap scan never marks the entries of deleted rows dead in the index, so each hit on
 * a busy key walked every slot deleted since the last autovacuum of the table (a minute's
 * naptime) to find the few that had just expired: 20,000 index entries and 140 heap pages for
 * 4,000 rows, 1.5–2.8 ms a hit where it had been 0.3 ms before the first slots expired
 * (docs/decisions/request-path.md). Starting the range at the mark leaves the dead entries
 * below it out of the scan.
 *
 * It stays exact because every hit runs under the bucket's advisory lock and reads the mark in
 * the statement that deletes, so the mark always holds: no slot of the bucket is at or before
 * `swept_to`. A hit raises it to its cutoff when the cutoff is past it, and never moves it up
 * otherwise, so an instance whose clock is behind (an older cutoff) deletes nothing more than
 * before and the mark stays where the faster clock put it. The one way a slot could land below
 * the mark is a hit counted at a time at or before it, from a clock a whole window behind
 * another; such a hit lowers the mark to just below its slot, so the next hit deletes that
 * slot as the old statement would have. No mark (a bucket made before this migration, or
 * none at all) deletes from the start, as before. The sweep deletes a bucket's row with its
 * slots, so the mark goes with them.
 *
 * `rate_limit_hit` (one hit, embedded in the node credential check) gets the same statement,
 * written once below: the two functions share the buckets' rows, so both must keep the mark.
 * It stays a function of its own, not a call of the other, which would add a call level to
 * every node call. SQLite counts in memory and never writes these tables; the column is added
 * there too, so that both schemas stay the same.
 */
import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Migration 027's counting of `count` hits, with the mark: `stored` is the bucket's row as the
 * lock's last holder left it, read once for the total and the mark. The oldest live slot is
 * looked for past the mark too, so a cutoff from a slower clock does not walk the dead entries
 * below it. The lock comes first and the counting in the next statement, so that its snapshot
 * sees the last holder's commit (migration 015).
 */
function countingBody(count: string, allowedOut: string): string {
  return `
    begin
      perform set_config('synchronous_commit', 'off', true);
      perform pg_advisory_xact_lock(hashtextextended('rl:' || p_bucket, 0));
      return query
        with stored as (
          select b.total, b.swept_to from rate_limit_buckets b where b.bucket = p_bucket
        ), expired as (
          delete from rate_limit_slots s
          where s.bucket = p_bucket and s.at <= p_cutoff
            and s.at > coalesce((select stored.swept_to from stored), -9223372036854775808)
          returning s.hits
        ), decided as (
          select state.live, state.oldest, state.swept, greatest(0, least(${count}, p_limit - state.live)) as allowed from (
            select coalesce((select stored.total from stored), 0)
                   - coalesce((select sum(e.hits) from expired e), 0) as live,
                   greatest((select stored.swept_to from stored), p_cutoff) as swept,
                   (select min(s.at) from rate_limit_slots s
                    where s.bucket = p_bucket and s.at > greatest((select stored.swept_to from stored), p_cutoff)) as oldest
          ) as state
        ), slot as (
          insert into rate_limit_slots as s (bucket, at, hits)
          select p_bucket, p_now, decided.allowed from decided where decided.allowed > 0
          on conflict (bucket, at) do update set hits = s.hits + excluded.hits
        ), total as (
          insert into rate_limit_buckets as b (bucket, total, last_at, swept_to)
          select p_bucket, decided.live + decided.allowed, p_now,
                 case when decided.allowed > 0 then least(decided.swept, p_now - 1) else decided.swept end
          from decided
          on conflict (bucket) do update
            set total = excluded.total, last_at = greatest(b.last_at, excluded.last_at), swept_to = excluded.swept_to
        )
        select decided.live::bigint, decided.oldest::bigint, ${allowedOut} from decided;
    end`;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('rate_limit_buckets').addColumn('swept_to', 'bigint').execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    create or replace function rate_limit_hit_many(p_bucket text, p_now bigint, p_cutoff bigint, p_limit bigint, p_count bigint)
    returns table (out_live bigint, out_oldest bigint, out_allowed bigint)
    language plpgsql volatile
    as $$${sql.raw(countingBody('p_count', 'decided.allowed::bigint'))}$$`.execute(db);
  await sql`
    create or replace function rate_limit_hit(p_bucket text, p_now bigint, p_cutoff bigint, p_limit bigint)
    returns table (out_live bigint, out_oldest bigint, out_allowed boolean)
    language plpgsql volatile
    as $$${sql.raw(countingBody('1', 'decided.allowed > 0'))}$$`.execute(db);
}

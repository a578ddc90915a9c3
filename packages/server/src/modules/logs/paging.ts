/**
 * Keyset paging shared by both logs. A cursor is the sequence number of the last entry a
 * client has seen, encrypted (lib/log-ids.ts), so every page costs one index range scan at any
 * depth and a later call with the last cursor returns only what arrived since. `since` is
 * turned into a sequence number too (the first entry recorded at or after that time), so
 * the first page is the same range scan as every other.
 */
import { type LogPageRequest, parseDuration } from '@warren/contract';
import { sql } from 'kysely';
import { invalidDuration, invalidRequest } from '../../core/errors.js';
import type { LogIds, LogKind } from '../../lib/log-ids.js';
import type { Db } from '../../storage/database.js';

const DEFAULT_LIMIT = 100;
const DEFAULT_SINCE = '1h';

interface PageStart {
  /** Entries strictly after this sequence number… */
  afterSeq?: number;
  /** …or recorded at or after this time (epoch ms). */
  sinceMs?: number;
}

export function decodeCursor(ids: LogIds, kind: LogKind, cursor: string): number {
  const seq = ids.cursorSeq(kind, cursor);
  if (seq === undefined) throw invalidRequest('cursor is not a cursor returned by this API for this log');
  return seq;
}

function pageStart(ids: LogIds, kind: LogKind, query: { since?: string; cursor?: string }, now: number): PageStart {
  if (query.cursor !== undefined && query.since !== undefined) {
    throw invalidRequest('pass either since or cursor, not both');
  }
  if (query.cursor !== undefined) return { afterSeq: decodeCursor(ids, kind, query.cursor) };
  const since = query.since ?? DEFAULT_SINCE;
  const ms = parseDuration(since);
  if (ms === undefined) throw invalidDuration(since);
  return { sinceMs: now - ms };
}

/** The logs and the column each records its arrival time in. */
const TIME_COLUMN = { connections: 'logged_at', audit_log: 'time', events: 'time' } as const;
type LogTable = keyof typeof TIME_COLUMN;
const KIND: Record<LogTable, LogKind> = { connections: 'connection', audit_log: 'audit', events: 'event' };

interface ResolvedStart {
  /** The page holds the entries with a greater sequence number. */
  afterSeq: number;
  /** True when nothing was recorded since: the page is empty without looking further. */
  exhausted: boolean;
}

/**
 * A cursor is already a position. `since` becomes the position before the first entry
 * recorded at or after that time (one probe of the (network_id, time, seq) index); when
 * there is none, the log's current end, so that a client tailing from there misses nothing.
 * Both are read in one statement — one snapshot — so an entry committed in between cannot
 * fall behind the end that is handed out.
 */
async function resolveStart(db: Db, table: LogTable, networkId: string, start: PageStart): Promise<ResolvedStart> {
  if (start.afterSeq !== undefined) return { afterSeq: start.afterSeq, exhausted: false };
  const time = sql.ref(TIME_COLUMN[table]);
  const log = sql.table(table);
  const { rows } = await sql<{ first_seq: number | null; last_seq: number | null }>`
    select
      (select seq from ${log} where network_id = ${networkId} and ${time} >= ${start.sinceMs}
        order by ${time}, seq limit 1) as first_seq,
      (select seq from ${log} where network_id = ${networkId} order by seq desc limit 1) as last_seq`.execute(db);
  const first = rows[0]?.first_seq;
  if (first == null) return { afterSeq: Number(rows[0]?.last_seq ?? 0), exhausted: true };
  return { afterSeq: Number(first) - 1, exhausted: false };
}

export interface LogPage<T> {
  entries: T[];
  nextCursor: string;
  hasMore: boolean;
}

/**
 * One page of a log: the query's start resolved to a position, then `fetch(afterSeq, n)`
 * reads at most n rows after it in `seq` order. Both logs and the events page through this one function.
 */
export async function readPage<R extends { seq: number }, T>(
  { db, logIds }: { db: Db; logIds: LogIds },
  table: LogTable,
  networkId: string,
  query: LogPageRequest,
  now: number,
  fetch: (afterSeq: number, rows: number) => Promise<R[]>,
  present: (row: R) => T,
): Promise<LogPage<T>> {
  const { limit, afterSeq, exhausted } = await pagePosition({ db, logIds }, table, networkId, query, now);
  const cursor = (seq: number) => logIds.cursor(KIND[table], seq);
  if (exhausted) return pageOf([], limit, present, afterSeq, cursor);
  return pageOf(await fetch(afterSeq, limit + 1), limit, present, afterSeq, cursor);
}

/** Where a page of the query starts, and how many entries it holds at most. */
export async function pagePosition(
  { db, logIds }: { db: Db; logIds: LogIds },
  table: LogTable,
  networkId: string,
  query: LogPageRequest,
  now: number,
): Promise<ResolvedStart & { limit: number }> {
  const start = await resolveStart(db, table, networkId, pageStart(logIds, KIND[table], query, now));
  return { ...start, limit: query.limit ?? DEFAULT_LIMIT };
}

/**
 * The page of `limit + 1` rows fetched after `afterSeq`, when they fill it: a page with more
 * after it, which no later entry can join (see KeptPages). Undefined when they do not.
 */
export function fullPage<R extends { seq: number }, T>(
  logIds: LogIds,
  table: LogTable,
  rows: R[],
  limit: number,
  present: (row: R) => T,
  afterSeq: number,
): LogPage<T> | undefined {
  if (rows.length <= limit) return undefined;
  return pageOf(rows, limit, present, afterSeq, (seq) => logIds.cursor(KIND[table], seq));
}

/**
 * Builds the page envelope from `limit + 1` fetched rows after `afterSeq`. With no rows the
 * cursor stays where it was, so tailing never skips nor repeats an entry.
 */
export function pageOf<R extends { seq: number }, T>(
  rows: R[],
  limit: number,
  present: (row: R) => T,
  afterSeq: number,
  cursor: (seq: number) => string,
): LogPage<T> {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page[page.length - 1];
  return { entries: page.map(present), nextCursor: cursor(last ? Number(last.seq) : afterSeq), hasMore };
}

/**
 * Keyset paging shared by both logs. A cursor is the sequence number of the last entry a
 * client has seen, encrypted (lib/log-ids.ts), so every page costs one index range scan at any
 * depth and a later call with the last cursor returns only what arrived since. `since` is
 * turned into a sequence number too (the first entry recorded at or after that time), so
 * the first page is the same range scan as every other.
 */
import { type LogPageRequest, parseDuration } from '@warren/contract';
import { invalidDuration, invalidRequest } from '../../core/errors.js';
import type { LogIds, LogKind } from '../../lib/log-ids.js';
import { compiledShapes } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';

const DEFAULT_LIMIT = 100;
const DEFAULT_SINCE = '1h';

export interface PageStart {
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

export function pageStart(
  ids: LogIds,
  kind: LogKind,
  query: { since?: string; cursor?: string },
  now: number,
): PageStart {
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
export type LogTable = keyof typeof TIME_COLUMN;
const KIND: Record<LogTable, LogKind> = { connections: 'connection', audit_log: 'audit', events: 'event' };

/** The kind of a log's ids and cursors (lib/log-ids.ts). */
export function logKind(table: LogTable): LogKind {
  return KIND[table];
}

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
  const [row] = await startOf(table)(db, { networkId, sinceMs: start.sinceMs ?? 0 });
  const first = row?.first_seq;
  if (first == null) return { afterSeq: Number(row?.last_seq ?? 0), exhausted: true };
  return { afterSeq: Number(first) - 1, exhausted: false };
}

/**
 * resolveStart's one statement, built once per log (storage/compiled-query.ts): every first page
 * runs it. `since` is relative to the call's time, so its bound moves every millisecond; the
 * answer is kept across the clock (the query's window) up to the time of the first entry it
 * found: until then the same entry is the first at or after the bound (none lies between the
 * bound and it, and anything recorded later is a commit, which starts the kept answers over).
 * With no entry found, nothing can appear by the clock alone. Before, every first page in a new
 * millisecond read it again: a statement per call under load.
 */
const startOf = compiledShapes(
  (table: LogTable) => table,
  (table) => (db: Db, p: { networkId: string; sinceMs: number }) => {
    // The three logs share the columns read here; the types name one of them.
    const log = table as 'audit_log';
    const time = TIME_COLUMN[table] as 'time';
    const first = (column: 'seq' | 'time') =>
      db
        .selectFrom(log)
        .select(column === 'seq' ? 'seq' : time)
        .where('network_id', '=', p.networkId)
        .where(time, '>=', p.sinceMs)
        .orderBy(time)
        .orderBy('seq')
        .limit(1);
    return db.selectNoFrom((eb) => [
      first('seq').as('first_seq'),
      first('time').as('first_time'),
      eb
        .selectFrom(log)
        .select('seq')
        .where('network_id', '=', p.networkId)
        .orderBy('seq', 'desc')
        .limit(1)
        .as('last_seq'),
    ]);
  },
  {
    window: {
      param: 'sinceMs',
      // A bound past the first entry's time no longer finds it.
      until: ([row]) => (row?.first_time == null ? Number.POSITIVE_INFINITY : Number(row.first_time) + 1),
    },
  },
);

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

/** How many entries a page of the query holds at most. */
export const pageLimit = (query: LogPageRequest): number => query.limit ?? DEFAULT_LIMIT;

/** Where a page of the query starts, and how many entries it holds at most. */
export async function pagePosition(
  { db, logIds }: { db: Db; logIds: LogIds },
  table: LogTable,
  networkId: string,
  query: LogPageRequest,
  now: number,
): Promise<ResolvedStart & { limit: number }> {
  const start = await resolveStart(db, table, networkId, pageStart(logIds, KIND[table], query, now));
  return { ...start, limit: pageLimit(query) };
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

/**
 * Full pages of the append-only logs (the audit log, the events), kept as their response bodies.
 *
 * Why a full page stays the same. Within a network a log's sequence order is commit order: on
 * SQLite there is one writer, and on PostgreSQL every append takes the network's lock right
 * before its insert and holds it to the commit (core/audit-entries.ts, storage/advisory-lock.ts),
 * so an entry numbered below one that is visible committed before it. A page read full, with an
 * entry after it, therefore already shows every entry its range will ever hold; anything written
 * later is numbered after it. (A cursor relies on the same order: a tailing client would skip an
 * entry otherwise.) A page that reached the log's end is never kept, since the next entry
 * belongs on it.
 *
 * What can still change one. Retention deletes old events, and a writer that broke the order
 * above would add an entry inside a page's range after it was read. So where entries can be
 * deleted (`removable`), and on PostgreSQL always (several instances write one database, and
 * that order is a promise every writer must keep rather than one the database keeps by itself),
 * a kept page is served only after a check: the count and the sum of the sequence numbers its
 * own query finds in its range, one index range scan, must still be the ones it showed. An
 * entry that appeared or vanished changes the count; one of each changes the sum. On SQLite the
 * audit log, never deleted from and written by one writer, is served without a statement.
 *
 * Retention or a late entry between the read and the check keeps nothing wrong: the check runs
 * on every serving, after whatever happened. The kept bytes are bounded; the least recently kept
 * pages are dropped first.
 *
 * Round trips. On SQLite a statement is a call on the thread, and a page runs them in turn (the
 * position of `since`, the check, the rows). On PostgreSQL each would be a round trip after the
 * key's, so a page is one prepared statement there: the position, the check of the page this
 * server last kept for the same request (its cursor or `since`, limit and filters), and the rows
 * unless that page is confirmed. Only a page that reaches the log's end while this server's
 * audit entries are still queued takes a second one, after they are written.
 */
import type { LogPageRequest } from '@warren/contract';
import { type Compilable, type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { LogIds } from '../../lib/log-ids.js';
import { compiledShapes } from '../../storage/compiled-query.js';
import { type Db, isPostgres } from '../../storage/database.js';
import type { Database } from '../../storage/schema.js';
import {
  type LogPage,
  type LogTable,
  logKind,
  type PageStart,
  pageLimit,
  pageOf,
  pagePosition,
  pageStart,
  readPage,
} from './paging.js';

class KeptPages<V extends { byteLength: number } = Buffer> {
  private readonly kept = new Map<string, V>();
  private bytes = 0;

  constructor(private readonly maxBytes = 16 * 2 ** 20) {}

  get(key: string): V | undefined {
    return this.kept.get(key);
  }

  keep(key: string, page: V): void {
    const old = this.kept.get(key);
    if (old) this.bytes -= old.byteLength;
    this.kept.delete(key);
    if (page.byteLength > this.maxBytes) return;
    this.kept.set(key, page);
    this.bytes += page.byteLength;
    for (const [oldest, entry] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(oldest);
      this.bytes -= entry.byteLength;
    }
  }

  /** Drops a page found stale. */
  drop(key: string): void {
    const old = this.kept.get(key);
    if (!old) return;
    this.bytes -= old.byteLength;
    this.kept.delete(key);
  }
}

/** The count and the sum of the sequence numbers of a query's entries in a range. */
export interface RangeSummary {
  count: number;
  sum: number;
}

/** One filtered query of a log: how its pages are read, checked and shown. */
export interface LogQuery<R extends { seq: number }, T> {
  /** Tells this query's filters apart from every other's: pages are kept per query. */
  filters: string;
  /** At most `rows` entries after `afterSeq`, in sequence order. */
  fetch(afterSeq: number, rows: number): Promise<R[]>;
  /** What this query finds in (after, last]. */
  summary(after: number, last: number): Promise<RangeSummary>;
  /**
   * PostgreSQL: a page's position, the check of the kept page `guess` and, unless that page is
   * confirmed, the page's rows, in one statement (one snapshot, one round trip).
   */
  readInOne(start: PageStart, rows: number, guess: KeptPage | undefined): Promise<ReadInOne<R>>;
  present(row: R): T;
}

/** What the one statement of a PostgreSQL page read finds. */
export interface ReadInOne<R> {
  /** The page holds the entries after this sequence number. */
  afterSeq: number;
  /** True when nothing was recorded since `since`: the page is empty. */
  exhausted: boolean;
  /** What the query finds in the guessed page's range (zeros without a guess). */
  summary: RangeSummary;
  /** At most `rows` entries after `afterSeq`; none when the guessed page was confirmed. */
  rows: R[];
}

/** A page's body and whether it was served as kept. */
export interface PageBody {
  body: Buffer;
  kept: boolean;
}

export interface KeptPage {
  body: Buffer;
  byteLength: number;
  /** The page holds the entries after this one… */
  afterSeq: number;
  /** …up to its last entry: the page holds the entries after its start up to this one. */
  lastSeq: number;
  /** What the page showed of its range, to compare with what the range holds now. */
  shown: RangeSummary;
}

export interface LogPagesOptions {
  /** True when entries can be deleted (retention): kept pages are then checked on SQLite too. */
  removable: boolean;
  /**
   * Waits until entries of calls already answered can be read: called before a page that
   * reaches the log's end is read (the audit log's entries are written in batches).
   */
  settle?: () => Promise<void>;
}

/** Requests whose last page is remembered, per log; past it they start over. */
const GUESSES = 4096;

/** The pages of one log, served from kept bodies where they cannot have changed. */
export class LogPages {
  private readonly kept = new KeptPages<KeptPage>();
  private readonly checked: boolean;
  private readonly inOne: boolean;
  /** PostgreSQL: per request (its cursor or `since`, limit and filters), the key of its last kept page. */
  private readonly guesses = new Map<string, string>();

  constructor(
    private readonly ctx: { db: Db; logIds: LogIds },
    private readonly table: LogTable,
    private readonly options: LogPagesOptions,
  ) {
    this.inOne = isPostgres(ctx.db);
    this.checked = options.removable || this.inOne;
  }

  /** The page `request` asks for, serialised by `serialize` (the response schema's). */
  async read<R extends { seq: number }, T>(
    networkId: string,
    request: LogPageRequest,
    now: number,
    query: LogQuery<R, T>,
    serialize: (page: LogPage<T>) => string,
  ): Promise<PageBody> {
    if (this.inOne) return this.readInOne(networkId, request, now, query, serialize);
    const { ctx, table } = this;
    const start = await pagePosition(ctx, table, networkId, request, now);
    const cursor = (seq: number) => ctx.logIds.cursor(logKind(table), seq);
    const bodyOf = (rows: R[]) =>
      Buffer.from(serialize(pageOf(rows, start.limit, query.present, start.afterSeq, cursor)));
    if (!start.exhausted) {
      const key = pageKey(networkId, start.afterSeq, start.limit, query.filters);
      const hit = this.kept.get(key);
      if (hit) {
        if (!this.checked || sameSummary(await query.summary(start.afterSeq, hit.lastSeq), hit.shown)) {
          return { body: hit.body, kept: true };
        }
        this.kept.drop(key);
      }
      const rows = await query.fetch(start.afterSeq, start.limit + 1);
      if (rows.length > start.limit) {
        const body = bodyOf(rows);
        this.kept.keep(key, keptPage(body, start.afterSeq, rows.slice(0, start.limit)));
        return { body, kept: false };
      }
      // The page reaches the log's end: shown as read unless queued entries must be waited for.
      if (!this.options.settle) return { body: bodyOf(rows), kept: false };
    } else if (!this.options.settle) return { body: bodyOf([]), kept: false };
    await this.options.settle();
    // Read again from the start: `since` may now find entries that had not been written.
    const page = await readPage(ctx, table, networkId, request, now, query.fetch, query.present);
    return { body: Buffer.from(serialize(page)), kept: false };
  }

  /**
   * PostgreSQL: one statement per page. Its position (a cursor, or `since` resolved against the
   * clock), the check of the page last kept for the same request, and the rows when that page
   * is not confirmed are read together, so a page costs one round trip whether kept or not. The
   * guess only decides what is checked: a page is served as kept only when the position the
   * statement found is the kept page's and its range still holds what the page showed.
   */
  private async readInOne<R extends { seq: number }, T>(
    networkId: string,
    request: LogPageRequest,
    now: number,
    query: LogQuery<R, T>,
    serialize: (page: LogPage<T>) => string,
  ): Promise<PageBody> {
    const { ctx, table } = this;
    const start = pageStart(ctx.logIds, logKind(table), request, now);
    const limit = pageLimit(request);
    const asked = `${networkId}\u0000${start.afterSeq ?? `since ${request.since ?? ''}`}\u0000${limit}\u0000${query.filters}`;
    const guessKey = this.guesses.get(asked);
    const guess = guessKey === undefined ? undefined : this.kept.get(guessKey);
    let read = await query.readInOne(start, limit + 1, guess);
    if (guess && read.afterSeq === guess.afterSeq && sameSummary(read.summary, guess.shown)) {
      return { body: guess.body, kept: true };
    }
    const key = pageKey(networkId, read.afterSeq, limit, query.filters);
    const cursor = (seq: number) => ctx.logIds.cursor(logKind(table), seq);
    const bodyOf = (page: ReadInOne<R>) =>
      Buffer.from(serialize(pageOf(page.rows, limit, query.present, page.afterSeq, cursor)));
    if (read.rows.length > limit) {
      const body = bodyOf(read);
      this.kept.keep(key, keptPage(body, read.afterSeq, read.rows.slice(0, limit)));
      if (this.guesses.size >= GUESSES) this.guesses.clear();
      this.guesses.set(asked, key);
      return { body, kept: false };
    }
    if (guessKey !== undefined) this.kept.drop(guessKey);
    // The page reaches the log's end: shown as read unless queued entries must be waited for,
    // then read again from the start (`since` may now find entries that had not been written).
    if (this.options.settle) {
      await this.options.settle();
      read = await query.readInOne(start, limit + 1, undefined);
    }
    return { body: bodyOf(read), kept: false };
  }
}

function pageKey(networkId: string, afterSeq: number, limit: number, filters: string): string {
  return `${networkId}\u0000${afterSeq}\u0000${limit}\u0000${filters}`;
}

/** A full page as kept: its body, its range and what it showed of the range. */
function keptPage(body: Buffer, afterSeq: number, shown: readonly { seq: number }[]): KeptPage {
  let sum = 0;
  for (const row of shown) sum += Number(row.seq);
  const lastSeq = Number(shown[shown.length - 1]!.seq);
  return { body, byteLength: body.length, afterSeq, lastSeq, shown: { count: shown.length, sum } };
}

function sameSummary(now: RangeSummary, shown: RangeSummary): boolean {
  return now.count === shown.count && now.sum === shown.sum;
}

/** Values of a log query: the network, the start, and whatever its filters name (each used). */
export type LogQueryParams = Record<string, string | number>;

/**
 * A log's page query and its range summary, each built once per filter shape
 * (storage/compiled-query.ts) from `filtered`: the network's entries that the filters keep.
 * Both use one filter, so the check counts exactly what a page shows. On PostgreSQL a third
 * statement does a page's whole read in one round trip (`readInOne`).
 */
export function logQueries<S, TB extends 'audit_log' | 'events'>(
  table: TB,
  shapeKey: (shape: S) => string,
  filtered: (db: Db, shape: S, p: LogQueryParams) => SelectQueryBuilder<Database, TB, object>,
) {
  const after = (db: Db, shape: S, p: LogQueryParams) =>
    filtered(db, shape, p).where(sql.ref('seq'), '>', p.after as number);
  const entriesOf = compiledShapes(
    shapeKey,
    (shape: S) => (db: Db, p: LogQueryParams) =>
      after(db, shape, p)
        .selectAll()
        .orderBy(sql.ref('seq'))
        .limit(p.rows as number),
  );
  const summaryOf = compiledShapes(
    shapeKey,
    (shape: S) => (db: Db, p: LogQueryParams) =>
      after(db, shape, p)
        .where(sql.ref('seq'), '<=', p.last as number)
        .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum(sql.ref('seq')).as('total')]),
  );
  const inOneOf = compiledShapes(
    ({ shape, since }: { shape: S; since: boolean }) => `${shapeKey(shape)}:${since}`,
    ({ shape, since }) =>
      (db: Db, p: LogQueryParams) =>
        inOne(db, table, since, p, filtered(db, shape, p), filtered(db, shape, p)),
    // Calls asking for the same page while its statement is in flight share the next one.
    { select: true, clock: 'sinceMs' },
  );
  return <T>(
    db: Db,
    shape: S,
    params: LogQueryParams,
    filters: string,
    present: (row: Selectable<Database[TB]>) => T,
  ): LogQuery<Selectable<Database[TB]> & { seq: number }, T> => {
    const entries = entriesOf(shape);
    const summary = summaryOf(shape);
    type Row = Selectable<Database[TB]> & { seq: number };
    return {
      filters,
      fetch: async (after, rows) => (await entries(db, { ...params, after, rows })) as Row[],
      summary: async (after, last) => {
        const [row] = await summary(db, { ...params, after, last });
        return { count: Number(row?.n ?? 0), sum: Number(row?.total ?? 0) };
      },
      readInOne: async (start, rows, guess) => {
        const since = start.afterSeq === undefined;
        const position: LogQueryParams = since ? { sinceMs: start.sinceMs ?? 0 } : { after: start.afterSeq! };
        // Without a guess the checked range is empty and the comparison never holds.
        const checked = guess
          ? {
              guessAfter: guess.afterSeq,
              guessLast: guess.lastSeq,
              guessCount: guess.shown.count,
              guessSum: guess.shown.sum,
            }
          : { guessAfter: -1, guessLast: -1, guessCount: -1, guessSum: -1 };
        const found = (await inOneOf({ shape, since })(db, { ...params, ...position, ...checked, rows })) as (Row & {
          page_after: number | string;
          page_exhausted: boolean;
          range_n: number | string;
          range_total: number | string;
        })[];
        const first = found[0];
        return {
          afterSeq: Number(first?.page_after ?? 0),
          exhausted: Boolean(first?.page_exhausted),
          summary: { count: Number(first?.range_n ?? 0), sum: Number(first?.range_total ?? 0) },
          // The outer join gives one row with no entry when the page is confirmed or empty.
          rows: found.filter((row) => row.seq != null),
        };
      },
      present,
    };
  };
}

/**
 * The one statement of a PostgreSQL page read: the position (the cursor, or the entry before the
 * first recorded at or after `sinceMs`, else the log's end, as paging.ts resolves it), what the
 * query finds in the guessed page's range, and the page's rows unless that range and position
 * are the guess's (a condition on the outer rows only: PostgreSQL makes it a one-time filter, so
 * the rows are not read at all then). `offset 0` keeps the position a subquery of its own, which
 * the planner would otherwise flatten, repeating its index probes wherever it is used.
 */
function inOne<TB extends 'audit_log' | 'events'>(
  db: Db,
  table: TB,
  since: boolean,
  p: LogQueryParams,
  checkedRange: SelectQueryBuilder<Database, TB, object>,
  page: SelectQueryBuilder<Database, TB, object>,
): Compilable<unknown> {
  const log = sql.table(table);
  const position = since
    ? sql`select coalesce(found.first_seq - 1, found.last_seq, 0) as page_after,
          found.first_seq is null as page_exhausted
        from (select
          (select seq from ${log} where network_id = ${p.networkId} and time >= ${p.sinceMs}
            order by time, seq limit 1) as first_seq,
          (select seq from ${log} where network_id = ${p.networkId} order by seq desc limit 1) as last_seq) as found
        offset 0`
    : sql`select ${p.after}::bigint as page_after, false as page_exhausted`;
  const range = checkedRange
    .where(sql.ref('seq'), '>', p.guessAfter as number)
    .where(sql.ref('seq'), '<=', p.guessLast as number)
    .select(sql<number>`count(*)`.as('range_n'))
    .select(sql<number>`coalesce(sum(seq), 0)`.as('range_total'));
  const rows = page
    .selectAll()
    .where(sql.ref('seq'), '>', sql.ref('pos.page_after'))
    .where(
      sql<boolean>`not (pos.page_after = ${p.guessAfter} and checked.range_n = ${p.guessCount}
        and checked.range_total = ${p.guessSum})`,
    )
    .orderBy(sql.ref('seq'))
    .limit(p.rows as number);
  const query = sql`select pos.page_after, pos.page_exhausted, checked.range_n, checked.range_total, entries.*
    from (${position}) as pos
    cross join lateral (${range}) as checked
    left join lateral (${rows}) as entries on true
    order by entries.seq`;
  return { compile: () => query.compile(db) };
}

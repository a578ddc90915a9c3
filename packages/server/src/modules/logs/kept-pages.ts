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
 */
import type { LogPageRequest } from '@warren/contract';
import { type Selectable, type SelectQueryBuilder, sql } from 'kysely';
import type { LogIds } from '../../lib/log-ids.js';
import { compiledShapes } from '../../storage/compiled-query.js';
import { type Db, isPostgres } from '../../storage/database.js';
import type { Database } from '../../storage/schema.js';
import { type LogPage, type LogTable, logKind, pageOf, pagePosition, readPage } from './paging.js';

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
  present(row: R): T;
}

/** A page's body and whether it was served as kept. */
export interface PageBody {
  body: Buffer;
  kept: boolean;
}

interface KeptPage {
  body: Buffer;
  byteLength: number;
  /** The page's last entry: the page holds the entries after its start up to this one. */
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

/** The pages of one log, served from kept bodies where they cannot have changed. */
export class LogPages {
  private readonly kept = new KeptPages<KeptPage>();
  private readonly checked: boolean;

  constructor(
    private readonly ctx: { db: Db; logIds: LogIds },
    private readonly table: LogTable,
    private readonly options: LogPagesOptions,
  ) {
    this.checked = options.removable || isPostgres(ctx.db);
  }

  /** The page `request` asks for, serialised by `serialize` (the response schema's). */
  async read<R extends { seq: number }, T>(
    networkId: string,
    request: LogPageRequest,
    now: number,
    query: LogQuery<R, T>,
    serialize: (page: LogPage<T>) => string,
  ): Promise<PageBody> {
    const { ctx, table } = this;
    const start = await pagePosition(ctx, table, networkId, request, now);
    const cursor = (seq: number) => ctx.logIds.cursor(logKind(table), seq);
    const bodyOf = (rows: R[]) =>
      Buffer.from(serialize(pageOf(rows, start.limit, query.present, start.afterSeq, cursor)));
    if (!start.exhausted) {
      const key = `${networkId}\u0000${start.afterSeq}\u0000${start.limit}\u0000${query.filters}`;
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
        const shown = rows.slice(0, start.limit);
        const lastSeq = Number(shown[shown.length - 1]!.seq);
        let sum = 0;
        for (const row of shown) sum += Number(row.seq);
        this.kept.keep(key, { body, byteLength: body.length, lastSeq, shown: { count: shown.length, sum } });
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
}

function sameSummary(now: RangeSummary, shown: RangeSummary): boolean {
  return now.count === shown.count && now.sum === shown.sum;
}

/** Values of a log query: the network, the start, and whatever its filters name (each used). */
export type LogQueryParams = Record<string, string | number>;

/**
 * A log's page query and its range summary, each built once per filter shape
 * (storage/compiled-query.ts) from `filtered`: the network's entries after `p.after` that the
 * filters keep. Both use one filter, so the check counts exactly what a page shows.
 */
export function logQueries<S, TB extends 'audit_log' | 'events'>(
  shapeKey: (shape: S) => string,
  filtered: (db: Db, shape: S, p: LogQueryParams) => SelectQueryBuilder<Database, TB, object>,
) {
  const entriesOf = compiledShapes(
    shapeKey,
    (shape: S) => (db: Db, p: LogQueryParams) =>
      filtered(db, shape, p)
        .selectAll()
        .orderBy(sql.ref('seq'))
        .limit(p.rows as number),
  );
  const summaryOf = compiledShapes(
    shapeKey,
    (shape: S) => (db: Db, p: LogQueryParams) =>
      filtered(db, shape, p)
        .where(sql.ref('seq'), '<=', p.last as number)
        .select((eb) => [eb.fn.countAll().as('n'), eb.fn.sum(sql.ref('seq')).as('total')]),
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
    return {
      filters,
      fetch: async (after, rows) =>
        (await entries(db, { ...params, after, rows })) as (Selectable<Database[TB]> & { seq: number })[],
      summary: async (after, last) => {
        const [row] = await summary(db, { ...params, after, last });
        return { count: Number(row?.n ?? 0), sum: Number(row?.total ?? 0) };
      },
      present,
    };
  };
}

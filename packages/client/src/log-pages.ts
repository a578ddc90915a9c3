/**
 * The connection log and the audit log: keyset-paged, ascending by recording time. A page's
 * `nextCursor` is always present, so `…All` walks every page and a tailer keeps the last
 * cursor and asks again later for only what arrived since.
 */
import type { AuditEntryBody, ConnectionEntryBody, Page } from '@warren/contract';
import type { Transport } from './http.js';
import type { AuditLogQuery, CallOptions, ConnectionLogQuery, LogQuery } from './types.js';

/** Yields every entry of every page, starting from `query`, until a page says `hasMore: false`. */
export async function* allEntries<T, Q extends LogQuery>(
  fetchPage: (query: Q) => Promise<Page<T>>,
  query: Q,
): AsyncGenerator<T, string> {
  let page = await fetchPage(query);
  for (;;) {
    yield* page.entries;
    if (!page.hasMore) return page.nextCursor;
    const { since: _since, ...rest } = query;
    page = await fetchPage({ ...rest, cursor: page.nextCursor } as Q);
  }
}

export class Logs {
  constructor(private readonly http: Transport) {}

  /** `GET /v1/logs/connections`: one page. */
  connections(query: ConnectionLogQuery = {}, options: CallOptions = {}): Promise<Page<ConnectionEntryBody>> {
    return this.http.json('GET', '/v1/logs/connections', { ...options, query: { ...query } });
  }

  /**
   * Every connection entry from `query` on, across pages. The generator's return value is
   * the last `nextCursor`: pass it as `cursor` later to continue where this left off.
   */
  connectionsAll(
    query: ConnectionLogQuery = {},
    options: CallOptions = {},
  ): AsyncGenerator<ConnectionEntryBody, string> {
    return allEntries((q) => this.connections(q, options), query);
  }

  /** `GET /v1/logs/audit`: one page. */
  audit(query: AuditLogQuery = {}, options: CallOptions = {}): Promise<Page<AuditEntryBody>> {
    return this.http.json('GET', '/v1/logs/audit', { ...options, query: { ...query } });
  }

  /** Every audit entry from `query` on, across pages (returns the last `nextCursor`). */
  auditAll(query: AuditLogQuery = {}, options: CallOptions = {}): AsyncGenerator<AuditEntryBody, string> {
    return allEntries((q) => this.audit(q, options), query);
  }
}

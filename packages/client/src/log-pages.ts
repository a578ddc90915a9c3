/**
 * The connection log and the audit log: keyset-paged, ascending by recording time. A page's
 * `nextCursor` is always present, so `…All` walks every page and a tailer keeps the last
 * cursor and asks again later for only what arrived since.
 */
import type { AuditEntryBody, ConnectionEntryBody, Page } from '@warren/contract';
import type { Transport } from './http.js';
import type { AuditLogQuery, CallOptions, ConnectionLogQuery, FollowOptions, LogQuery } from './types.js';

/** How long a following iterator waits before asking again once it has read everything. */
export const DEFAULT_POLL_INTERVAL_MS = 2000;

/**
 * Yields every entry of every page, starting from `query`, until a page says `hasMore: false`;
 * with `follow`, then keeps asking with the last cursor every `pollIntervalMs` until `signal`
 * aborts. Each page starts right after the previous page's cursor, so no entry is skipped or
 * repeated. The generator's return value is the last `nextCursor`, to resume from later.
 */
export async function* allEntries<T, Q extends LogQuery>(
  fetchPage: (query: Q) => Promise<Page<T>>,
  query: Q,
  tail: FollowOptions = {},
): AsyncGenerator<T, string> {
  const { since: _since, ...rest } = query;
  let page = await fetchPage(query);
  for (;;) {
    yield* page.entries;
    const cursor = page.nextCursor;
    if (!page.hasMore) {
      if (!tail.follow) return cursor;
      if (!(await pause(tail.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, tail.signal))) return cursor;
    }
    try {
      page = await fetchPage({ ...rest, cursor } as Q);
    } catch (error) {
      // Aborting is how a caller stops following, also in the middle of a poll.
      if (tail.follow && tail.signal?.aborted) return cursor;
      throw error;
    }
  }
}

/** Waits `ms`; false (at once) when `signal` aborts first. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export class Logs {
  constructor(private readonly http: Transport) {}

  /** `GET /v1/logs/connections`: one page. */
  connections(query: ConnectionLogQuery = {}, options: CallOptions = {}): Promise<Page<ConnectionEntryBody>> {
    return this.http.json('GET', '/v1/logs/connections', { ...options, query: { ...query } });
  }

  /**
   * Every connection entry from `query` on, across pages (with `follow`, also what arrives
   * later). The generator's return value is the last `nextCursor`: pass it as `cursor` later
   * to continue where this left off.
   */
  connectionsAll(
    query: ConnectionLogQuery = {},
    options: FollowOptions = {},
  ): AsyncGenerator<ConnectionEntryBody, string> {
    return allEntries((q) => this.connections(q, options), query, options);
  }

  /** `GET /v1/logs/audit`: one page. */
  audit(query: AuditLogQuery = {}, options: CallOptions = {}): Promise<Page<AuditEntryBody>> {
    return this.http.json('GET', '/v1/logs/audit', { ...options, query: { ...query } });
  }

  /** Every audit entry from `query` on, across pages (returns the last `nextCursor`). */
  auditAll(query: AuditLogQuery = {}, options: FollowOptions = {}): AsyncGenerator<AuditEntryBody, string> {
    return allEntries((q) => this.audit(q, options), query, options);
  }
}

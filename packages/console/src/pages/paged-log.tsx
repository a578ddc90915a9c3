/**
 * A log (connections, audit, events) read as its API pages it: the first page shows at once,
 * the next one loads when the end of the table scrolls into view (or with the button, for the
 * keyboard), and with the live tail on, new entries are asked for every few seconds once the
 * end is reached. Nothing reads the whole log before showing it.
 */
import type { Page } from '@warren/contract';
import { useCallback, useEffect, useRef, useState } from 'react';

const TAIL_MS = 2000;

export interface PagedLog<T> {
  entries: T[] | null;
  error: unknown;
  hasMore: boolean;
  loadingMore: boolean;
  loadMore: () => void;
}

/**
 * `fetchPage(undefined)` reads the first page, `fetchPage(cursor)` the one after; `key` names
 * the query (a new key starts over).
 */
export function usePagedLog<T>(
  key: string,
  fetchPage: (cursor?: string) => Promise<Page<T>>,
  follow: boolean,
): PagedLog<T> {
  const [entries, setEntries] = useState<T[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [hasMore, setHasMore] = useState(false);
  const [loadingMore, setLoadingMore] = useState(false);
  const cursor = useRef<string | undefined>(undefined);
  const busy = useRef(false);
  const run = useRef(0);
  const latestFetch = useRef(fetchPage);
  latestFetch.current = fetchPage;

  // biome-ignore lint/correctness/useExhaustiveDependencies: the key names the query; fetchPage is read through a ref
  useEffect(() => {
    const mine = ++run.current;
    setEntries(null);
    setError(null);
    setHasMore(false);
    busy.current = true;
    latestFetch
      .current()
      .then((page) => {
        if (run.current !== mine) return;
        cursor.current = page.nextCursor;
        setEntries(page.entries);
        setHasMore(page.hasMore);
      })
      .catch((e) => run.current === mine && setError(e))
      .finally(() => {
        if (run.current === mine) busy.current = false;
      });
    return () => {
      run.current++;
    };
  }, [key]);

  const loadMore = useCallback(() => {
    if (busy.current || cursor.current === undefined) return;
    const mine = run.current;
    busy.current = true;
    setLoadingMore(true);
    latestFetch
      .current(cursor.current)
      .then((page) => {
        if (run.current !== mine) return;
        cursor.current = page.nextCursor;
        setHasMore(page.hasMore);
        if (page.entries.length > 0) setEntries((prev) => [...(prev ?? []), ...page.entries]);
      })
      .catch((e) => run.current === mine && setError(e))
      .finally(() => {
        busy.current = false;
        setLoadingMore(false);
      });
  }, []);

  // The live tail asks for what arrived since, once everything before it is shown.
  useEffect(() => {
    if (!follow || hasMore || entries === null) return;
    const timer = setInterval(loadMore, TAIL_MS);
    return () => clearInterval(timer);
  }, [follow, hasMore, entries, loadMore]);

  return { entries, error, hasMore, loadingMore, loadMore };
}

/** The end of a paged table: loads the next page when it scrolls into view, or when pressed. */
export function MoreOnScroll<T>({ log, what }: { log: PagedLog<T>; what: string }) {
  const sentinel = useRef<HTMLDivElement>(null);
  const { hasMore, loadMore } = log;
  const shown = log.entries?.length ?? 0;
  // Observed again after each page: an end still in view after one loads asks for the next.
  // biome-ignore lint/correctness/useExhaustiveDependencies: shown re-arms the observer
  useEffect(() => {
    const node = sentinel.current;
    if (!node || !hasMore) return;
    const observer = new IntersectionObserver((seen) => {
      if (seen.some((s) => s.isIntersecting)) loadMore();
    });
    observer.observe(node);
    return () => observer.disconnect();
  }, [hasMore, loadMore, shown]);
  if (!hasMore) return null;
  return (
    <div ref={sentinel} className="more">
      <button type="button" onClick={loadMore} disabled={log.loadingMore}>
        {log.loadingMore ? `Loading more ${what}…` : `Load more ${what}`}
      </button>
    </div>
  );
}

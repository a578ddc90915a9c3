/**
 * Reading the events: `GET /v1/events`, keyset-paged and tailed like the logs, `type` filtering
 * by types and families. The outbox's rows for one webhook alone (webhook.test) are not shown.
 * Queries are built once per filter shape (storage/compiled-query.ts) and full pages kept
 * (modules/logs/kept-pages.ts): retention deletes old events, so a kept page is checked
 * against its range each time it is served.
 */
import type { EventBody, EventListRequest } from '@warren/contract';
import type { AppContext } from '../../core/context.js';
import { checkEventFilters, presentEvent } from '../../core/events.js';
import type { Db } from '../../storage/database.js';
import { LogPages, type LogQueryParams, logQueries, type PageBody } from '../logs/kept-pages.js';
import type { LogPage } from '../logs/paging.js';

/** The filters' shape: how many exact types and how many families (`device.*`); `*` is none. */
interface Shape {
  exact: number;
  families: number;
}

function filtered(db: Db, shape: Shape, p: LogQueryParams) {
  const query = db
    .selectFrom('events')
    .where('network_id', '=', p.networkId as string)
    .where('webhook_id', 'is', null);
  if (shape.exact + shape.families === 0) return query;
  return query.where((eb) =>
    eb.or([
      ...Array.from({ length: shape.exact }, (_, i) => eb('type', '=', p[`t${i}`] as string)),
      ...Array.from({ length: shape.families }, (_, i) => eb('type', 'like', p[`f${i}`] as string)),
    ]),
  );
}

const shapeKey = (shape: Shape) => `${shape.exact}:${shape.families}`;

const eventQuery = logQueries('events', shapeKey, filtered);

/**
 * The filters as the query's shape and its values (`t0…`: exact types; `f0…`: families as LIKE
 * patterns); refuses one that names no event type, as a webhook's `events` does.
 */
function filterParams(filters: readonly string[]): { shape: Shape; params: LogQueryParams } {
  checkEventFilters(filters);
  const params: LogQueryParams = {};
  if (filters.includes('*')) return { shape: { exact: 0, families: 0 }, params };
  const exact = [...new Set(filters.filter((filter) => !filter.endsWith('.*')))];
  const families = [...new Set(filters.filter((filter) => filter.endsWith('.*')))];
  exact.forEach((type, i) => {
    params[`t${i}`] = type;
  });
  families.forEach((family, i) => {
    params[`f${i}`] = `${family.slice(0, -1)}%`;
  });
  return { shape: { exact: exact.length, families: families.length }, params };
}

/** The events' pages, for one server: their kept bodies live here. */
export function eventPages(ctx: Pick<AppContext, 'db' | 'logIds' | 'clock'>) {
  const pages = new LogPages(ctx, 'events', { removable: true });
  return (
    networkId: string,
    request: EventListRequest,
    serialize: (page: LogPage<EventBody>) => string,
  ): Promise<PageBody> => {
    const filters = request.type ?? [];
    const { shape, params } = filterParams(filters);
    const query = eventQuery(ctx.db, shape, { ...params, networkId }, filters.join(','), presentEvent);
    return pages.read(networkId, request, ctx.clock.now(), query, serialize);
  };
}

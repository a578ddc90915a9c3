/** GET /v1/webhooks/{id}/deliveries: keyset pages in creation order, with opaque cursors. */
import type { DeliveryListRequest } from '@warren/contract';
import type { AppContext } from '../../core/context.js';
import { notFound } from '../../core/errors.js';
import { compiledShapes, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { decodeCursor, type LogPage } from '../logs/paging.js';
import { presentDelivery } from './webhooks.presenter.js';
import { findWebhook } from './webhooks.repository.js';

const DEFAULT_LIMIT = 100;

/** A page of an endpoint's deliveries, built once per shape (with or without a state filter). */
const pageOf = compiledShapes(
  (state: boolean) => (state ? 'state' : 'all'),
  (state) => (db: Db, p: { webhookId: string; after: number; limit: number; state?: string }) => {
    let select = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', p.webhookId);
    select = select.where('seq', '>', p.after);
    if (state) select = select.where('state', '=', p.state as string);
    return select.orderBy('seq').limit(p.limit);
  },
);

export async function deliveryPage(
  ctx: Pick<AppContext, 'db' | 'logIds'>,
  networkId: string,
  webhookId: string,
  query: DeliveryListRequest,
  stamp?: ReadStamp,
): Promise<LogPage<ReturnType<typeof presentDelivery>>> {
  // Kept per read stamp (PostgreSQL) or until the next commit (SQLite): the page's only statement
  // is then its own.
  if (!(await findWebhook(ctx.db, networkId, webhookId, stamp))) throw notFound(`webhook ${webhookId} does not exist`);
  const after = query.cursor === undefined ? 0 : decodeCursor(ctx.logIds, 'delivery', query.cursor);
  const limit = query.limit ?? DEFAULT_LIMIT;
  const rows = query.state
    ? await pageOf(true)(ctx.db, { webhookId, after, limit: limit + 1, state: query.state })
    : await pageOf(false)(ctx.db, { webhookId, after, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    entries: page.map(presentDelivery),
    nextCursor: ctx.logIds.cursor('delivery', last ? Number(last.seq) : after),
    hasMore: rows.length > limit,
  };
}

/** GET /v1/webhooks/{id}/deliveries: keyset pages in creation order, with opaque cursors. */
import type { DeliveryListRequest } from '@warren/contract';
import type { AppContext } from '../../core/context.js';
import { notFound } from '../../core/errors.js';
import { decodeCursor, type LogPage } from '../logs/paging.js';
import { presentDelivery } from './webhooks.presenter.js';
import { findWebhook } from './webhooks.repository.js';

const DEFAULT_LIMIT = 100;

export async function deliveryPage(
  ctx: Pick<AppContext, 'db' | 'logIds'>,
  networkId: string,
  webhookId: string,
  query: DeliveryListRequest,
): Promise<LogPage<ReturnType<typeof presentDelivery>>> {
  if (!(await findWebhook(ctx.db, networkId, webhookId))) throw notFound(`webhook ${webhookId} does not exist`);
  const after = query.cursor === undefined ? 0 : decodeCursor(ctx.logIds, 'delivery', query.cursor);
  const limit = query.limit ?? DEFAULT_LIMIT;
  let select = ctx.db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('seq', '>', after);
  if (query.state) select = select.where('state', '=', query.state);
  const rows = await select
    .orderBy('seq')
    .limit(limit + 1)
    .execute();
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    entries: page.map(presentDelivery),
    nextCursor: ctx.logIds.cursor('delivery', last ? Number(last.seq) : after),
    hasMore: rows.length > limit,
  };
}

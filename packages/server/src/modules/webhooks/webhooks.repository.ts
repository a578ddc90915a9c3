/** SQL of webhook endpoints and their deliveries. */
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';

/**
 * An endpoint by id and a network's endpoints, built once (storage/compiled-query.ts): they are
 * read on every call of the webhook reads (the deliveries page checks its endpoint first), and
 * building a query with Kysely cost more than SQLite takes to answer it.
 */
const webhookById = compiledQuery(
  (db, p: { networkId: string; id: string }) =>
    db.selectFrom('webhooks').selectAll().where('network_id', '=', p.networkId).where('id', '=', p.id),
  { stampedBy: 'networkId' },
);

const webhooksOf = compiledQuery(
  (db, p: { networkId: string }) =>
    db.selectFrom('webhooks').selectAll().where('network_id', '=', p.networkId).orderBy('created_at').orderBy('id'),
  { stampedBy: 'networkId' },
);

export async function findWebhook(db: Db, networkId: string, id: string, stamp?: ReadStamp) {
  return (await webhookById(db, { networkId, id }, stamp))[0];
}

export function listWebhooks(db: Db, networkId: string, stamp?: ReadStamp) {
  return webhooksOf(db, { networkId }, stamp);
}

export async function countWebhooks(db: Db, networkId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('network_id', '=', networkId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The last event of the network: a new endpoint receives what comes after it. */
export async function lastEventSeq(db: Db, networkId: string): Promise<number> {
  const row = await db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('network_id', '=', networkId)
    .executeTakeFirst();
  return Number(row?.seq ?? 0);
}

export function findDelivery(db: Db, webhookId: string, id: string) {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhookId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Deletes a network's delivery attempts older than `cutoff` (retention, with the events they carried). */
export async function deleteDeliveriesBefore(db: Db, networkId: string, cutoff: number): Promise<void> {
  await db
    .deleteFrom('webhook_deliveries')
    .where('network_id', '=', networkId)
    .where('created_at', '<', cutoff)
    .execute();
}

/**
 * The SQL of the dispatcher, a batch at a time. An endpoint's work is read in one go — the
 * deliveries due for another attempt, then the events after its cursor — and what the
 * attempts did is written back in one transaction: one multi-row insert for the first
 * attempts, an update per kind of retry outcome, and the endpoint's row (cursor, last
 * delivery, disabled by a 410). No row is written before a first attempt: the cursor is the
 * record of what is still to send, so the write path of the API shares the database with
 * one short transaction per batch of deliveries, not with a row per event and endpoint.
 */
import type { EventRow } from '../../core/events.js';
import { newId } from '../../lib/ids.js';
import type { Db } from '../../storage/database.js';
import type { Outcome } from './attempt.js';
import type { DeliveryRow, WebhookRow } from './webhooks.presenter.js';

/** Deliveries attempted per batch, at most; also the events read after the cursor. */
export const BATCH_SIZE = 100;
const INSERT_CHUNK = 100;

export interface Batch {
  /** Deliveries due for another attempt, oldest event first, with their events (gone past retention: undefined). */
  retries: { delivery: DeliveryRow; event: EventRow | undefined }[];
  /** The events after the endpoint's cursor, in commit order (its filters not applied yet). */
  fresh: EventRow[];
}

export interface BatchResult {
  retries: { delivery: DeliveryRow; outcome: Outcome }[];
  fresh: { event: EventRow; outcome: Outcome }[];
  /** The last event seq dealt with: attempted, or skipped by the endpoint's filters. */
  cursor: number;
  /** Set when the endpoint answered 410: the reason it is disabled. */
  disabledReason: string | null;
}

export async function readBatch(db: Db, webhook: WebhookRow, now: number): Promise<Batch> {
  const due = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('webhook_id', '=', webhook.id)
    .where('state', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('seq')
    .limit(BATCH_SIZE)
    .execute();
  const fresh = (await db
    .selectFrom('events')
    .selectAll()
    .where('network_id', '=', webhook.network_id)
    .where('seq', '>', webhook.event_cursor)
    .orderBy('seq')
    .limit(BATCH_SIZE)
    .execute()) as EventRow[];
  const events = await eventsBySeq(
    db,
    due.map((d) => Number(d.event_seq)),
  );
  return { retries: due.map((delivery) => ({ delivery, event: events.get(Number(delivery.event_seq)) })), fresh };
}

async function eventsBySeq(db: Db, seqs: readonly number[]): Promise<Map<number, EventRow>> {
  if (seqs.length === 0) return new Map();
  const rows = (await db.selectFrom('events').selectAll().where('seq', 'in', seqs).execute()) as EventRow[];
  return new Map(rows.map((row) => [Number(row.seq), row]));
}

/**
 * Records a batch; false (and nothing written) when this process no longer holds the
 * endpoint's lease or the endpoint is gone, as another instance then owns its deliveries.
 */
export async function recordBatch(db: Db, webhook: WebhookRow, owner: string, result: BatchResult): Promise<boolean> {
  const now = Date.now();
  const delivered = [...result.retries, ...result.fresh].some(({ outcome }) => outcome.state === 'delivered');
  return db.transaction().execute(async (trx) => {
    // First, and conditional: it locks the endpoint's row (a concurrent DELETE waits, so no
    // delivery row outlives its endpoint) and proves the lease and the cursor are still ours.
    const moved = await trx
      .updateTable('webhooks')
      .set({
        event_cursor: result.cursor,
        ...(delivered ? { last_delivery_at: now } : {}),
        ...(result.disabledReason === null ? {} : { enabled: 0, disabled_reason: result.disabledReason }),
      })
      .where('id', '=', webhook.id)
      .where('lease_owner', '=', owner)
      .where('event_cursor', '=', webhook.event_cursor)
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) === 0) return false;
    const rows = result.fresh.map(({ event, outcome }) => ({
      id: newId('delivery'),
      network_id: webhook.network_id,
      webhook_id: webhook.id,
      event_seq: Number(event.seq),
      event_id: event.id,
      type: event.type,
      created_at: event.time,
      ...columnsOf(outcome),
    }));
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
      await trx
        .insertInto('webhook_deliveries')
        .values(rows.slice(i, i + INSERT_CHUNK))
        .execute();
    }
    // Retries that ended alike (delivered on the same attempt) share one update.
    const groups = new Map<string, { set: ReturnType<typeof columnsOf>; ids: string[] }>();
    for (const { delivery, outcome } of result.retries) {
      const set = columnsOf(outcome);
      const key = JSON.stringify(set);
      const group = groups.get(key) ?? { set, ids: [] };
      group.ids.push(delivery.id);
      groups.set(key, group);
    }
    for (const { set, ids } of groups.values()) {
      await trx.updateTable('webhook_deliveries').set(set).where('id', 'in', ids).execute();
    }
    return true;
  });
}

function columnsOf(outcome: Outcome) {
  return {
    state: outcome.state,
    attempts: outcome.attempts,
    last_status: outcome.status,
    last_error: outcome.error,
    next_attempt_at: outcome.nextAttempt,
  };
}

/**
 * Delivery of events to webhook endpoints, at least once, from the outbox.
 *
 * Each endpoint is worked by one instance at a time, the holder of its lease (a conditional
 * UPDATE on the webhook row, 30 s long, renewed every 10 s while it works, so it outlives any
 * attempt's 15 s deadline), so with several instances on one
 * PostgreSQL database each attempt is made once, and an endpoint's deliveries are attempted
 * in the order their events committed. The holder first fans out: the events after the
 * endpoint's cursor that its filters match become delivery rows, and the cursor moves, in one
 * transaction. Then it attempts what is due. A crash loses nothing: rows stay pending and the
 * lease runs out, so another instance (or this one, restarted) carries on.
 *
 * Endpoints are worked in parallel and each attempt has a deadline, so a slow or dead endpoint
 * delays only itself; the API never waits for a delivery.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { type EventRow, matchesFilters, presentEvent } from '../../core/events.js';
import { onEventsCommitted } from '../../core/unit-of-work.js';
import { newId } from '../../lib/ids.js';
import { parseList } from '../../lib/json.js';
import type { Db } from '../../storage/database.js';
import { type Attempt, post } from './sender.js';
import { signedHeaders } from './signing.js';
import type { DeliveryRow, WebhookRow } from './webhooks.presenter.js';

const SECOND = 1000;
/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h: then the delivery is failed. */
export const RETRY_SCHEDULE_MS = [5, 300, 1_800, 7_200, 18_000, 36_000, 86_400].map((s) => s * SECOND);
const LEASE_MS = 30 * SECOND;
const POLL_MS = 250;
const COALESCE_MS = 50;
const FAN_OUT_BATCH = 500;
const DUE_BATCH = 100;
const MAX_RETRY_AFTER_MS = 86_400 * SECOND;

export interface DispatcherOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  schedule: readonly number[];
  /** Endpoints worked at once by this process. */
  maxEndpoints: number;
}

export class WebhookDispatcher {
  private readonly owner = `w_${randomBytes(8).toString('hex')}`;
  private readonly working = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly options: DispatcherOptions,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.wake(), POLL_MS).unref();
    this.unsubscribe = onEventsCommitted(() => this.soon());
  }

  /**
   * After a commit: look for work within COALESCE_MS. Commits that come close together are
   * handled by one pass, so a busy API pays for a fan-out per batch of events, not per event.
   */
  private soon(): void {
    if (this.pending || this.stopped) return;
    this.pending = setTimeout(() => {
      this.pending = undefined;
      this.wake();
    }, COALESCE_MS);
  }

  /** Looks for work now (a commit wrote events, or the poll interval passed). */
  wake(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((error: unknown) => this.log.error({ err: error }, 'webhook dispatcher pass failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.pending);
    this.unsubscribe?.();
    await this.ticking;
    await Promise.all(this.working.values());
  }

  private async tick(): Promise<void> {
    const room = this.options.maxEndpoints - this.working.size;
    if (room <= 0) return;
    const now = Date.now();
    // Free endpoints this process is not working, least recently worked first (a release
    // stamps the time), so every endpoint gets its turn when there are more than `maxEndpoints`.
    let query = this.db.selectFrom('webhooks').select('id').where('enabled', '=', 1).where('lease_until', '<', now);
    if (this.working.size > 0) query = query.where('id', 'not in', [...this.working.keys()]);
    const free = await query.orderBy('lease_until').limit(room).execute();
    for (const { id } of free) {
      if (this.working.has(id) || this.working.size >= this.options.maxEndpoints) continue;
      if (!(await this.lease(id))) continue;
      const work = this.work(id)
        .catch((error: unknown) => this.log.error({ err: error, webhookId: id }, 'webhook delivery failed'))
        .finally(() => {
          this.working.delete(id);
          void this.release(id);
        });
      this.working.set(id, work);
    }
  }

  /** Takes or renews the endpoint's lease; false when another instance holds it. */
  private async lease(id: string): Promise<boolean> {
    const now = Date.now();
    const result = await this.db
      .updateTable('webhooks')
      .set({ lease_owner: this.owner, lease_until: now + LEASE_MS })
      .where('id', '=', id)
      .where('enabled', '=', 1)
      .where((eb) => eb.or([eb('lease_until', '<', now), eb('lease_owner', '=', this.owner)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  private async release(id: string): Promise<void> {
    await this.db
      .updateTable('webhooks')
      .set({ lease_owner: null, lease_until: Date.now() })
      .where('id', '=', id)
      .where('lease_owner', '=', this.owner)
      .execute()
      .catch(() => undefined);
  }

  /** Fans out and attempts due deliveries of one endpoint until there is nothing due. */
  private async work(id: string): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const fanned = await this.fanOut(id);
      const due = await this.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('webhook_id', '=', id)
        .where('state', '=', 'pending')
        .where('next_attempt_at', '<=', Date.now())
        .orderBy('seq')
        .limit(DUE_BATCH)
        .execute();
      if (due.length === 0 && fanned === 0) return;
      const events = await this.eventsOf(due);
      const webhook = await this.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      if (!webhook || webhook.enabled !== 1) return;
      // Successes are recorded together after the batch (a crash before that delivers them
      // again, which at least once allows); failures at once, with their next attempt.
      const delivered: DeliveryRow[] = [];
      let renewed = Date.now();
      try {
        for (const delivery of due) {
          if (this.stopped) return;
          if (Date.now() - renewed > LEASE_MS / 3) {
            if (!(await this.lease(id))) return;
            renewed = Date.now();
          }
          const event = events.get(Number(delivery.event_seq));
          if (!event) {
            await this.settle(delivery, { status: null, error: 'the event is past its retention' }, 'failed', null);
            continue;
          }
          const outcome = await this.attempt(webhook, delivery, event);
          if (outcome === 'disabled') return;
          if (outcome === 'ok') delivered.push(delivery);
        }
      } finally {
        await this.settleDelivered(id, delivered);
      }
    }
  }

  private async settleDelivered(webhookId: string, delivered: readonly DeliveryRow[]): Promise<void> {
    if (delivered.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      // Grouped by what differs between them: the attempt count and the status.
      const groups = new Map<string, { attempts: number; status: number | null; ids: string[] }>();
      for (const d of delivered) {
        const key = `${d.attempts}:${d.last_status}`;
        const group = groups.get(key) ?? { attempts: d.attempts + 1, status: d.last_status, ids: [] };
        group.ids.push(d.id);
        groups.set(key, group);
      }
      for (const { attempts, status, ids } of groups.values()) {
        await trx
          .updateTable('webhook_deliveries')
          .set({ state: 'delivered', attempts, last_status: status, last_error: null, next_attempt_at: null })
          .where('id', 'in', ids)
          .execute();
      }
      await trx.updateTable('webhooks').set({ last_delivery_at: Date.now() }).where('id', '=', webhookId).execute();
    });
  }

  /** New events after the endpoint's cursor that its filters match become pending deliveries. */
  private async fanOut(id: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const webhook = await trx.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      if (!webhook) return 0;
      const rows = await trx
        .selectFrom('events')
        .select(['seq', 'id', 'type', 'webhook_id', 'time'])
        .where('network_id', '=', webhook.network_id)
        .where('seq', '>', webhook.event_cursor)
        .orderBy('seq')
        .limit(FAN_OUT_BATCH)
        .execute();
      if (rows.length === 0) return 0;
      const filters = parseList(webhook.events);
      const wanted = rows.filter((row) =>
        row.webhook_id === null ? matchesFilters(row.type, filters) : row.webhook_id === webhook.id,
      );
      for (let i = 0; i < wanted.length; i += 200) {
        await trx
          .insertInto('webhook_deliveries')
          .values(
            wanted.slice(i, i + 200).map((row) => ({
              id: newId('delivery'),
              network_id: webhook.network_id,
              webhook_id: webhook.id,
              event_seq: Number(row.seq),
              event_id: row.id,
              type: row.type,
              state: 'pending',
              attempts: 0,
              last_status: null,
              last_error: null,
              next_attempt_at: 0,
              created_at: row.time,
            })),
          )
          .execute();
      }
      // Conditional on the cursor read above: a second fan-out of the same events commits nothing.
      const moved = await trx
        .updateTable('webhooks')
        .set({ event_cursor: Number(rows[rows.length - 1]!.seq) })
        .where('id', '=', id)
        .where('event_cursor', '=', webhook.event_cursor)
        .executeTakeFirst();
      if (Number(moved.numUpdatedRows) === 0) throw new Error('another instance fanned out these events');
      return rows.length;
    });
  }

  private async eventsOf(deliveries: readonly DeliveryRow[]): Promise<Map<number, EventRow>> {
    if (deliveries.length === 0) return new Map();
    const rows = (await this.db
      .selectFrom('events')
      .selectAll()
      .where(
        'seq',
        'in',
        deliveries.map((d) => Number(d.event_seq)),
      )
      .execute()) as EventRow[];
    return new Map(rows.map((row) => [Number(row.seq), row]));
  }

  private async attempt(
    webhook: WebhookRow,
    delivery: DeliveryRow,
    event: EventRow,
  ): Promise<'ok' | 'retry' | 'disabled'> {
    const data = presentEvent(event);
    const body = JSON.stringify({ type: data.type, timestamp: data.time, data });
    const now = Date.now();
    const secrets = [webhook.secret];
    if (webhook.previous_secret && (webhook.previous_secret_until ?? 0) > now) secrets.push(webhook.previous_secret);
    const headers = signedHeaders(secrets, event.id, Math.floor(now / SECOND), body);
    const result = await post(webhook.url, headers, body, {
      timeoutMs: this.options.timeoutMs,
      allowPrivate: this.options.allowPrivate,
    });
    const status = result.status;
    if (status !== null && status >= 200 && status < 300) {
      // Recorded with the rest of the batch (settleDelivered).
      delivery.last_status = status;
      return 'ok';
    }
    if (status === 410) {
      await this.settle(delivery, result, 'failed', null);
      await this.db
        .updateTable('webhooks')
        .set({ enabled: 0, disabled_reason: `the endpoint answered 410 Gone at ${new Date().toISOString()}` })
        .where('id', '=', webhook.id)
        .execute();
      return 'disabled';
    }
    const wait = this.nextWait(delivery.attempts + 1, result);
    await this.settle(
      delivery,
      result,
      wait === undefined ? 'failed' : 'pending',
      wait === undefined ? null : Date.now() + wait,
    );
    return 'retry';
  }

  /** The wait before the next attempt after `attempts` failed ones; undefined when none is left. */
  private nextWait(attempts: number, result: Attempt): number | undefined {
    const scheduled = this.options.schedule[attempts - 1];
    if (scheduled === undefined) return undefined;
    if (result.retryAfter !== undefined) return Math.min(result.retryAfter * SECOND, MAX_RETRY_AFTER_MS);
    // ±10 %, so the retries of many deliveries that failed together do not arrive together.
    return Math.round(scheduled * (0.9 + Math.random() * 0.2));
  }

  private async settle(
    delivery: DeliveryRow,
    result: Attempt,
    state: string,
    nextAttempt: number | null,
  ): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({
        state,
        attempts: delivery.attempts + 1,
        last_status: result.status,
        last_error:
          result.error ??
          (result.status !== null && (result.status < 200 || result.status >= 300) ? `HTTP ${result.status}` : null),
        next_attempt_at: nextAttempt,
      })
      .where('id', '=', delivery.id)
      .execute();
  }
}

/** Runs the dispatcher of this process until the app closes. */
export function startWebhookDispatcher(app: FastifyInstance): WebhookDispatcher {
  const { settings } = app.ctx;
  const dispatcher = new WebhookDispatcher(app.ctx.db, app.log, {
    allowPrivate: settings.webhooksAllowPrivate === true,
    timeoutMs: settings.webhookTimeoutMs ?? 15 * SECOND,
    schedule: settings.webhookRetryScheduleMs ?? RETRY_SCHEDULE_MS,
    maxEndpoints: 64,
  });
  dispatcher.start();
  app.addHook('onClose', () => dispatcher.stop());
  return dispatcher;
}

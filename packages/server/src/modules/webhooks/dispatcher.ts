/**
 * Delivery of events to webhook endpoints, at least once, from the outbox.
 *
 * Each endpoint is worked by one instance at a time, the holder of its lease (a conditional
 * UPDATE on the webhook row, 30 s long, renewed every 10 s while it works, so it outlives any
 * attempt's 15 s deadline), so with several instances on one PostgreSQL database each attempt
 * is made once, and an endpoint's deliveries are first attempted in the order their events
 * committed. The endpoint's cursor (the last event dealt with) is the record of what is still
 * to send: the holder reads the events after it, attempts those its filters match, and moves
 * the cursor in the transaction that records the attempts (delivery-batch.ts). A crash loses
 * nothing: the cursor has not moved, the lease runs out, and another instance (or this one,
 * restarted) attempts the batch again.
 *
 * Endpoints are worked in parallel and each attempt has a deadline, so a slow or dead endpoint
 * delays only itself; the API never waits for a delivery, and deliveries yield the event loop
 * to requests when it is saturated (pacer.ts).
 */
import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import type { AppContext } from '../../core/context.js';
import { matchesFilters } from '../../core/events.js';
import { onEventsCommitted } from '../../core/unit-of-work.js';
import type { WorkerLog } from '../../core/worker.js';
import { parseList } from '../../lib/json.js';
import type { Db } from '../../storage/database.js';
import { type AttemptOptions, attemptDelivery, expiredOutcome, type Outcome } from './attempt.js';
import { type Batch, type BatchResult, readBatch, recordBatch } from './delivery-batch.js';
import { Pacer } from './pacer.js';
import type { WebhookRow } from './webhooks.presenter.js';

const SECOND = 1000;
/** 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 24 h: then the delivery is failed. */
export const RETRY_SCHEDULE_MS = [5, 300, 1_800, 7_200, 18_000, 36_000, 86_400].map((s) => s * SECOND);
const LEASE_MS = 30 * SECOND;
const POLL_MS = 250;
const COALESCE_MS = 50;
/** A batch's attempts are recorded at the latest this long after it started. */
const FLUSH_MS = SECOND;

export interface DispatcherOptions extends AttemptOptions {
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
    private readonly log: WorkerLog,
    private readonly options: DispatcherOptions,
    private readonly pacer: Pacer,
  ) {}

  start(): void {
    this.pacer.start();
    this.timer = setInterval(() => this.wake(), POLL_MS).unref();
    this.unsubscribe = onEventsCommitted(() => this.soon());
  }

  /**
   * After a commit: look for work within COALESCE_MS. Commits that come close together are
   * handled by one pass, so a busy API pays for a look per batch of events, not per event.
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
    this.pacer.stop();
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

  /**
   * Works one endpoint a batch at a time until nothing is due: attempts (retries first, then
   * new events in commit order), then records them together. Successes and failures alike are
   * recorded with their batch: a crash in between attempts them again, which at least once
   * allows.
   */
  private async work(id: string): Promise<void> {
    for (;;) {
      if (this.stopped) return;
      const webhook = await this.db.selectFrom('webhooks').selectAll().where('id', '=', id).executeTakeFirst();
      if (webhook?.enabled !== 1 || webhook.lease_owner !== this.owner) return;
      const batch = await readBatch(this.db, webhook, Date.now());
      if (batch.retries.length === 0 && batch.fresh.length === 0) return;
      const result = await this.attemptBatch(webhook, batch);
      if (!(await recordBatch(this.db, webhook, this.owner, result))) {
        this.log.warn({ webhookId: id }, 'webhook batch not recorded: the endpoint was deleted or its lease lost');
        return;
      }
      if (result.disabledReason !== null) return;
    }
  }

  private async attemptBatch(webhook: WebhookRow, batch: Batch): Promise<BatchResult> {
    const result: BatchResult = { retries: [], fresh: [], cursor: Number(webhook.event_cursor), disabledReason: null };
    const started = Date.now();
    let renewed = started;
    // A batch ends after FLUSH_MS too, so a slow endpoint's outcomes are recorded as they come.
    const mayGoOn = async () => {
      if (this.stopped || Date.now() - started > FLUSH_MS) return false;
      if (Date.now() - renewed > LEASE_MS / 3) {
        if (!(await this.lease(webhook.id))) return false;
        renewed = Date.now();
      }
      await this.pacer.turn();
      return true;
    };
    const gone = (outcome: Outcome) => {
      if (outcome.gone) result.disabledReason = `the endpoint answered 410 Gone at ${new Date().toISOString()}`;
      return outcome.gone;
    };
    for (const { delivery, event } of batch.retries) {
      if (!(await mayGoOn())) return result;
      const outcome = event
        ? await attemptDelivery(webhook, event, delivery.attempts, this.options)
        : expiredOutcome(delivery.attempts);
      result.retries.push({ delivery, outcome });
      if (gone(outcome)) return result;
    }
    const filters = parseList(webhook.events);
    for (const event of batch.fresh) {
      const wanted = event.webhook_id === null ? matchesFilters(event.type, filters) : event.webhook_id === webhook.id;
      if (wanted) {
        if (!(await mayGoOn())) return result;
        const outcome = await attemptDelivery(webhook, event, 0, this.options);
        result.fresh.push({ event, outcome });
        result.cursor = Number(event.seq);
        if (gone(outcome)) return result;
      } else result.cursor = Number(event.seq);
    }
    return result;
  }
}

/**
 * Runs the dispatcher of this process until stopped. `server`: the HTTP server whose requests
 * deliveries yield to (pacer.ts).
 */
export function startWebhookDispatcher(
  ctx: Pick<AppContext, 'db' | 'settings'>,
  log: WorkerLog,
  server: Server | undefined,
): WebhookDispatcher {
  const { settings } = ctx;
  const dispatcher = new WebhookDispatcher(
    ctx.db,
    log,
    {
      allowPrivate: settings.webhooksAllowPrivate === true,
      timeoutMs: settings.webhookTimeoutMs ?? 15 * SECOND,
      schedule: settings.webhookRetryScheduleMs ?? RETRY_SCHEDULE_MS,
      maxEndpoints: 64,
    },
    new Pacer(server),
  );
  dispatcher.start();
  return dispatcher;
}

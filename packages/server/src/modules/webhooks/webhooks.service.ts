/**
 * Webhook endpoint rules: a URL the server may deliver to, event filters that name real
 * types or families, the plan's limit on endpoints, a secret shown once (at creation and
 * at each rotation), and the old secret signing beside the new one for 24 hours after a
 * rotation so receivers can switch without losing a delivery.
 */
import type { WebhookBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import { auditLockName } from '../../core/audit-entries.js';
import type { AppContext } from '../../core/context.js';
import { invalidState, notFound, planLimit } from '../../core/errors.js';
import { checkEventFilters } from '../../core/events.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { newId } from '../../lib/ids.js';
import { listText } from '../../lib/json.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import type { Db } from '../../storage/database.js';
import { planOf } from '../network/network.repository.js';
import { limitsOf } from '../network/plans.js';
import { generateWebhookSecret } from './signing.js';
import { checkTargetUrl } from './target-guard.js';
import { presentWebhook } from './webhooks.presenter.js';
import { countWebhooks, findDelivery, findWebhook, lastEventSeq } from './webhooks.repository.js';

/** How long the previous secret keeps signing after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

function checkFilters(filters: readonly string[]): string[] {
  checkEventFilters(filters);
  return [...new Set(filters)];
}

async function requireWebhook(db: Db, networkId: string, id: string) {
  const row = await findWebhook(db, networkId, id);
  if (!row) throw notFound(`webhook ${id} does not exist`);
  return row;
}

export interface WebhookInput {
  url: string;
  events: string[];
  description?: string;
}

export async function createWebhook(ctx: AppContext, actor: Actor, input: WebhookInput): Promise<WebhookBody> {
  const { networkId } = actor;
  const url = checkTargetUrl(input.url, ctx.settings.webhooksAllowPrivate === true);
  const events = checkFilters(input.events);
  const secret = generateWebhookSecret();
  return unitOfWork(ctx, actor, 'webhook.create', async (trx, now) => {
    await advisoryLock(trx, `webhooks:${networkId}`);
    const plan = await planOf(trx, networkId);
    const limit = limitsOf(plan).webhooks;
    if (limit !== null && (await countWebhooks(trx, networkId)) >= limit) {
      throw planLimit(
        `the ${plan} plan allows ${limit} webhook${limit === 1 ? '' : 's'}; remove one or change the plan`,
      );
    }
    // Under the lock that orders the network's events: every event after this one reaches the endpoint.
    await advisoryLock(trx, auditLockName(networkId));
    const row = {
      id: newId('webhook'),
      network_id: networkId,
      url,
      events: listText(events),
      description: input.description ?? '',
      enabled: 1,
      disabled_reason: null,
      secret,
      previous_secret: null,
      previous_secret_until: null,
      created_at: now,
      last_delivery_at: null,
      event_cursor: await lastEventSeq(trx, networkId),
      lease_owner: null,
    };
    await trx.insertInto('webhooks').values(row).execute();
    return { value: presentWebhook({ ...row, lease_until: 0 }, secret), target: row.id };
  });
}

export async function updateWebhook(
  ctx: AppContext,
  actor: Actor,
  id: string,
  input: Partial<WebhookInput> & { enabled?: boolean },
): Promise<WebhookBody> {
  const { networkId } = actor;
  const changes = {
    ...(input.url !== undefined ? { url: checkTargetUrl(input.url, ctx.settings.webhooksAllowPrivate === true) } : {}),
    ...(input.events !== undefined ? { events: listText(checkFilters(input.events)) } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
  };
  return unitOfWork(ctx, actor, 'webhook.update', async (trx) => {
    const row = await requireWebhook(trx, networkId, id);
    const set = {
      ...changes,
      // Only a transition changes anything: disabling one that a 410 disabled keeps that reason.
      ...(input.enabled === false && row.enabled === 1 ? { enabled: 0, disabled_reason: 'disabled by request' } : {}),
      ...(input.enabled === true && row.enabled !== 1 ? await enabledAgain(trx, networkId) : {}),
    };
    if (Object.keys(set).length > 0) await trx.updateTable('webhooks').set(set).where('id', '=', id).execute();
    return { value: presentWebhook(await requireWebhook(trx, networkId, id)), target: id };
  });
}

/**
 * An endpoint enabled again receives the events from then on, as a new one does, not those of
 * the time it was disabled: after a 410 or a pause these may be days of them, which a receiver
 * would take for new (GET /v1/events has them). Deliveries it already had waiting for a retry
 * go out. Its reason for being disabled is cleared.
 */
async function enabledAgain(trx: Db, networkId: string) {
  // Under the lock that orders the network's events: every event after this one reaches the endpoint.
  await advisoryLock(trx, auditLockName(networkId));
  return { enabled: 1, disabled_reason: null, event_cursor: await lastEventSeq(trx, networkId) };
}

export async function deleteWebhook(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const { networkId } = actor;
  await unitOfWork(ctx, actor, 'webhook.delete', async (trx) => {
    await requireWebhook(trx, networkId, id);
    await trx.deleteFrom('webhook_deliveries').where('webhook_id', '=', id).execute();
    await trx.deleteFrom('webhooks').where('id', '=', id).execute();
    return { value: undefined, target: id };
  });
}

/** A new secret; the current one keeps signing beside it for ROTATION_OVERLAP_MS. */
export async function rotateSecret(ctx: AppContext, actor: Actor, id: string): Promise<{ secret: string }> {
  const { networkId } = actor;
  const secret = generateWebhookSecret();
  return unitOfWork(ctx, actor, 'webhook.rotate', async (trx, now) => {
    // One statement, the current secret moved by the database itself: read first and written
    // after, two rotations at once (PostgreSQL, any instances) could both keep the secret before
    // them as the previous one, and the first one's answer would never sign anything.
    const rotated = await trx
      .updateTable('webhooks')
      .set((eb) => ({ secret, previous_secret: eb.ref('secret'), previous_secret_until: now + ROTATION_OVERLAP_MS }))
      .where('network_id', '=', networkId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (Number(rotated.numUpdatedRows) === 0) throw notFound(`webhook ${id} does not exist`);
    return { value: { secret }, target: id };
  });
}

/**
 * Sends a webhook.test event to this endpoint only. A disabled endpoint is refused, as a retry
 * is: accepting would promise a delivery that waits, unseen, until it is enabled again.
 */
export async function testWebhook(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const { networkId } = actor;
  await unitOfWork(ctx, actor, 'webhook.test', async (trx) => {
    const row = await requireWebhook(trx, networkId, id);
    if (row.enabled !== 1) throw invalidState(`webhook ${id} is disabled; enable it (PATCH enabled: true) first`);
    const webhook = presentWebhook(row);
    return { value: undefined, target: id, events: [{ type: 'webhook.test', data: { webhook }, webhookId: id }] };
  });
}

/** Makes a delivery due now: a failed one, one waiting for its next attempt, or one to send again. */
export async function retryDelivery(ctx: AppContext, actor: Actor, id: string, deliveryId: string): Promise<void> {
  const { networkId } = actor;
  await unitOfWork(ctx, actor, 'webhook.retry', async (trx, now) => {
    const webhook = await requireWebhook(trx, networkId, id);
    const delivery = await findDelivery(trx, id, deliveryId);
    if (!delivery) throw notFound(`delivery ${deliveryId} of webhook ${id} does not exist`);
    if (webhook.enabled !== 1) throw invalidState(`webhook ${id} is disabled; enable it (PATCH enabled: true) first`);
    // Due now, and listed as due now (its nextAttempt), until the dispatcher attempts it.
    await trx
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', next_attempt_at: now })
      .where('id', '=', deliveryId)
      .execute();
    return { value: undefined, target: deliveryId };
  });
}

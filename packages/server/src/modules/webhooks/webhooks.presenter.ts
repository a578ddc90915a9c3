/** Rows → API JSON for webhooks and deliveries. The secret leaves only when it is made. */
import type { DeliveryState, EventType, WebhookBody, WebhookDeliveryBody } from '@warren/contract';
import type { Selectable } from 'kysely';
import { parseList } from '../../lib/json.js';
import { iso, isoOrNull } from '../../lib/time.js';
import type { WebhookDeliveriesTable, WebhooksTable } from '../../storage/schema-events.js';

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export function presentWebhook(row: WebhookRow, secret?: string): WebhookBody {
  return {
    id: row.id,
    url: row.url,
    events: parseList(row.events),
    description: row.description,
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    created: iso(row.created_at),
    lastDelivery: isoOrNull(row.last_delivery_at),
    ...(secret ? { secret } : {}),
  };
}

export function presentDelivery(row: DeliveryRow): WebhookDeliveryBody {
  return {
    id: row.id,
    eventId: row.event_id,
    type: row.type as EventType,
    state: row.state as DeliveryState,
    attempts: row.attempts,
    lastStatus: row.last_status,
    lastError: row.last_error,
    nextAttempt: row.state === 'pending' ? isoOrNull(row.next_attempt_at) : null,
    created: iso(row.created_at),
  };
}

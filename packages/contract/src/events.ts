/**
 * Events and webhooks: the event record, the webhook endpoint, its deliveries, and the
 * requests that manage them.
 */
import { type Static, Type } from 'typebox';
import { literals, Nullable, NullableTime, Time } from './nullable.js';

export const EVENT_TYPES = [
  'device.created',
  'device.deleted',
  'device.online',
  'device.offline',
  'device.updated',
  'device.pending',
  'device.approved',
  'device.key_expired',
  'route.advertised',
  'route.approved',
  'route.disabled',
  'policy.updated',
  'key.created',
  'key.deleted',
  'key.expiring',
  'key.expired',
  'user.created',
  'user.updated',
  'user.deleted',
  'webhook.test',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export const ACTOR_TYPES = ['key', 'user', 'device', 'system'] as const;
export const DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const;
export type DeliveryState = (typeof DELIVERY_STATES)[number];

/** A filter of event types: an exact type, a family (`device.*`) or `*`. */
export const EVENT_FILTER_PATTERN = '^(\\*|[a-z]+\\.\\*|[a-z]+\\.[a-z_]+)$';

const NullableString = Nullable(Type.String());

export const Event = Type.Object(
  {
    id: Type.String(),
    type: literals(EVENT_TYPES),
    time: Time,
    actor: Type.Object({ type: literals(ACTOR_TYPES), id: NullableString, name: NullableString }),
    data: Type.Record(Type.String(), Type.Unknown(), {
      description: 'the record(s) after the change: { device }, { route }, { key }, { user }, { etag, version }',
    }),
  },
  { $id: 'Event' },
);

export const Webhook = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Type.String(),
    enabled: Type.Boolean(),
    disabledReason: NullableString,
    created: Time,
    lastDelivery: NullableTime,
    secret: Type.Optional(Type.String({ description: 'whsec_…: only in the response that creates the webhook' })),
  },
  { $id: 'Webhook' },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String(),
    type: literals(EVENT_TYPES),
    state: literals(DELIVERY_STATES),
    attempts: Type.Integer(),
    lastStatus: Nullable(Type.Integer()),
    lastError: NullableString,
    nextAttempt: NullableTime,
    created: Time,
  },
  { $id: 'WebhookDelivery' },
);

export const EVENT_COMPONENTS = [Event, Webhook, WebhookDelivery] as const;

const closed = { additionalProperties: false } as const;
const EventFilters = Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 32 });

export const CreateWebhookBody = Type.Object(
  {
    url: Type.String({ maxLength: 2048 }),
    events: EventFilters,
    description: Type.Optional(Type.String({ maxLength: 500 })),
  },
  closed,
);
export type CreateWebhookRequest = Static<typeof CreateWebhookBody>;

export const PatchWebhookBody = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 2048 })),
    events: Type.Optional(EventFilters),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  closed,
);
export type PatchWebhookRequest = Static<typeof PatchWebhookBody>;

/** GET /v1/events: the logs' paging plus `type` (repeatable; `device.*` matches a family). */
export const EventListQuery = Type.Object({
  since: Type.Optional(Type.String()),
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  type: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: 32 })),
});
export type EventListRequest = Static<typeof EventListQuery>;

/** GET /v1/webhooks/{id}/deliveries: keyset pages, newest first is not needed: ascending like the logs. */
export const DeliveryListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  state: Type.Optional(literals(DELIVERY_STATES)),
});
export type DeliveryListRequest = Static<typeof DeliveryListQuery>;

export interface EventBody {
  id: string;
  type: EventType;
  time: string;
  actor: { type: (typeof ACTOR_TYPES)[number]; id: string | null; name: string | null };
  data: Record<string, unknown>;
}
export interface WebhookBody {
  id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  disabledReason: string | null;
  created: string;
  lastDelivery: string | null;
  secret?: string;
}
export interface WebhookDeliveryBody {
  id: string;
  eventId: string;
  type: EventType;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  nextAttempt: string | null;
  created: string;
}

/**
 * Table types of events and webhooks (migration 007), merged into `Database` by declaration
 * merging so the outbox's tables are described beside one another.
 */
import type { Generated } from 'kysely';

export interface EventsTable {
  seq: Generated<number>;
  id: string;
  network_id: string;
  type: string;
  time: number;
  /** JSON `{ type, id, name }`. */
  actor: string;
  /** JSON: the record(s) after the change. */
  data: string;
  /** Set when only this endpoint receives the event (webhook.test). */
  webhook_id: string | null;
}

export interface WebhooksTable {
  id: string;
  network_id: string;
  url: string;
  events: string; // JSON array of filters
  description: string;
  enabled: number;
  disabled_reason: string | null;
  /** whsec_…: the sender must know it to sign, so it is stored as is (docs/decisions/webhooks.md). */
  secret: string;
  previous_secret: string | null;
  previous_secret_until: number | null;
  created_at: number;
  last_delivery_at: number | null;
  /** The last event seq fanned out to this endpoint. */
  event_cursor: number;
  lease_owner: string | null;
  lease_until: Generated<number>;
}

export interface WebhookDeliveriesTable {
  seq: Generated<number>;
  id: string;
  network_id: string;
  webhook_id: string;
  event_seq: number;
  event_id: string;
  type: string;
  state: string; // pending | delivered | failed
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  next_attempt_at: number | null;
  created_at: number;
}

/** The last announced state of a device (`online`/`offline`) or key (`expiring`/`expired`). */
export interface AnnouncementsTable {
  subject: string;
  network_id: string;
  state: string;
}

declare module './schema.js' {
  interface Database {
    events: EventsTable;
    webhooks: WebhooksTable;
    webhook_deliveries: WebhookDeliveriesTable;
    announcements: AnnouncementsTable;
  }
}

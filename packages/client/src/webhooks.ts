/**
 * `/v1/webhooks`: endpoints that receive events, signed by the Standard Webhooks scheme. The
 * secret is returned by `create` and `rotate` only; verify deliveries with it (for example
 * with the `standardwebhooks` package).
 */
import type { Page, WebhookBody, WebhookDeliveryBody } from '@warren/contract';
import type { Transport } from './http.js';
import { allEntries } from './log-pages.js';
import type { CallOptions, FollowOptions } from './types.js';

export interface CreateWebhookInput {
  url: string;
  /** Types (`device.created`), families (`device.*`) or `*`. */
  events: string[];
  description?: string;
}

export interface UpdateWebhookInput {
  url?: string;
  events?: string[];
  description?: string;
  enabled?: boolean;
}

export interface DeliveryQuery {
  cursor?: string;
  limit?: number;
  state?: 'pending' | 'delivered' | 'failed';
}

const path = (webhookId: string) => `/v1/webhooks/${encodeURIComponent(webhookId)}`;

export class Webhooks {
  constructor(private readonly http: Transport) {}

  async list(options: CallOptions = {}): Promise<WebhookBody[]> {
    return (await this.http.json<{ webhooks: WebhookBody[] }>('GET', '/v1/webhooks', options)).webhooks;
  }

  /** `POST /v1/webhooks`: the signing secret is in `secret`, this once. */
  create(input: CreateWebhookInput, options: CallOptions = {}): Promise<WebhookBody & { secret: string }> {
    return this.http.json('POST', '/v1/webhooks', { ...options, body: input });
  }

  get(webhookId: string, options: CallOptions = {}): Promise<WebhookBody> {
    return this.http.json('GET', path(webhookId), options);
  }

  update(webhookId: string, input: UpdateWebhookInput, options: CallOptions = {}): Promise<WebhookBody> {
    return this.http.json('PATCH', path(webhookId), { ...options, body: input });
  }

  async delete(webhookId: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('DELETE', path(webhookId), options);
  }

  /** A new secret (returned once); the old one keeps signing beside it for 24 hours. */
  rotate(webhookId: string, options: CallOptions = {}): Promise<{ secret: string }> {
    return this.http.json('POST', `${path(webhookId)}/rotate`, options);
  }

  /** Sends a `webhook.test` event to this endpoint only. */
  async test(webhookId: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('POST', `${path(webhookId)}/test`, options);
  }

  /** One page of the endpoint's deliveries, oldest first. */
  deliveries(
    webhookId: string,
    query: DeliveryQuery = {},
    options: CallOptions = {},
  ): Promise<Page<WebhookDeliveryBody>> {
    return this.http.json('GET', `${path(webhookId)}/deliveries`, { ...options, query: { ...query } });
  }

  /** Every delivery from `query` on, across pages (returns the last `nextCursor`). */
  deliveriesAll(
    webhookId: string,
    query: DeliveryQuery = {},
    options: FollowOptions = {},
  ): AsyncGenerator<WebhookDeliveryBody, string> {
    return allEntries((q) => this.deliveries(webhookId, q, options), query, options);
  }

  /** Delivers again now. */
  async retry(webhookId: string, deliveryId: string, options: CallOptions = {}): Promise<void> {
    await this.http.json('POST', `${path(webhookId)}/deliveries/${encodeURIComponent(deliveryId)}/retry`, options);
  }
}

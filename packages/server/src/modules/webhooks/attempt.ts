/**
 * One attempt of one delivery: the signed POST, and what its answer means for the delivery —
 * delivered (a 2xx), due again after the schedule's next wait (or the endpoint's Retry-After),
 * failed for good once the schedule is used up, or the endpoint gone (410).
 */
import { type EventRow, presentEvent } from '../../core/events.js';
import { type Attempt, post } from './sender.js';
import { signedHeaders } from './signing.js';
import type { WebhookRow } from './webhooks.presenter.js';

const SECOND = 1000;
/** The longest wait a Retry-After obtains: the schedule's longest step. */
const MAX_RETRY_AFTER_MS = 86_400 * SECOND;
/** Bodies of recent events, shared by the endpoints that receive them (see bodyOf). */
const BODY_CACHE_SIZE = 1024;

export interface AttemptOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Waits before the 2nd, 3rd, … attempt; after the last one the delivery is failed. */
  schedule: readonly number[];
}

/** The delivery after an attempt, as it is recorded. */
export interface Outcome {
  state: 'delivered' | 'pending' | 'failed';
  attempts: number;
  status: number | null;
  error: string | null;
  nextAttempt: number | null;
  /** The endpoint answered 410 Gone: it is disabled and nothing more is sent to it. */
  gone: boolean;
}

/** Attempts to deliver `event` to `webhook`; `attemptsBefore` is the count of earlier attempts. */
export async function attemptDelivery(
  webhook: WebhookRow,
  event: EventRow,
  attemptsBefore: number,
  options: AttemptOptions,
): Promise<Outcome> {
  const body = bodyOf(event);
  const now = Date.now();
  const secrets = [webhook.secret];
  if (webhook.previous_secret && (webhook.previous_secret_until ?? 0) > now) secrets.push(webhook.previous_secret);
  const headers = signedHeaders(secrets, event.id, Math.floor(now / SECOND), body);
  const result = await post(webhook.url, headers, body, options);
  return outcomeOf(result, attemptsBefore + 1, options.schedule);
}

/** The delivery of an event that retention removed before it could be sent again. */
export function expiredOutcome(attemptsBefore: number): Outcome {
  return {
    state: 'failed',
    attempts: attemptsBefore + 1,
    status: null,
    error: 'the event is past its retention',
    nextAttempt: null,
    gone: false,
  };
}

function outcomeOf(result: Attempt, attempts: number, schedule: readonly number[]): Outcome {
  const { status } = result;
  if (status !== null && status >= 200 && status < 300) {
    return { state: 'delivered', attempts, status, error: null, nextAttempt: null, gone: false };
  }
  const error = result.error ?? (status !== null ? `HTTP ${status}` : null);
  if (status === 410) return { state: 'failed', attempts, status, error, nextAttempt: null, gone: true };
  const wait = nextWait(attempts, result, schedule);
  return wait === undefined
    ? { state: 'failed', attempts, status, error, nextAttempt: null, gone: false }
    : { state: 'pending', attempts, status, error, nextAttempt: Date.now() + wait, gone: false };
}

/**
 * The wait before the next attempt after `attempts` failed ones; undefined when none is left.
 * The schedule's step is the least wait: a `Retry-After` can lengthen it, never shorten it, so
 * an endpoint answering `Retry-After: 0` cannot spend its seven retries in a second. A longer
 * one is honoured up to the schedule's longest step (24 h): past that, the endpoint's answer is
 * taken as "much later", and the delivery stays within the retention of its event (docs/decisions/webhooks.md).
 */
function nextWait(attempts: number, result: Attempt, schedule: readonly number[]): number | undefined {
  const scheduled = schedule[attempts - 1];
  if (scheduled === undefined) return undefined;
  // Up to 10 % later, so the retries of many deliveries that failed together do not arrive
  // together, and never sooner than the schedule says.
  const wait = Math.round(scheduled * (1 + Math.random() * 0.1));
  if (result.retryAfter === undefined) return wait;
  return Math.max(wait, Math.min(result.retryAfter * SECOND, MAX_RETRY_AFTER_MS));
}

const bodies = new Map<string, string>();

/**
 * The Standard Webhooks body of an event. It is the same for every endpoint, and endpoints
 * work through the outbox at about the same pace, so the body is built once and reused by
 * the others (the least recently used dropped past a bound).
 */
function bodyOf(event: EventRow): string {
  let body = bodies.get(event.id);
  if (body === undefined) {
    const data = presentEvent(event);
    body = JSON.stringify({ type: data.type, timestamp: data.time, data });
    if (bodies.size >= BODY_CACHE_SIZE) bodies.delete(bodies.keys().next().value as string);
  } else bodies.delete(event.id);
  bodies.set(event.id, body);
  return body;
}

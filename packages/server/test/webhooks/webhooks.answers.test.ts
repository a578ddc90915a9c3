/**
 * What an endpoint's answer means for a delivery, over real HTTP on loopback: only a 2xx
 * within the deadline counts, a redirect is not followed, and the wait before the next attempt
 * is the schedule's step, lengthened (never shortened) by a Retry-After, up to 24 hours.
 */
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRow } from '../../src/core/events.js';
import { attemptDelivery } from '../../src/modules/webhooks/attempt.js';
import { RETRY_SCHEDULE_MS } from '../../src/modules/webhooks/dispatcher.js';
import { generateWebhookSecret } from '../../src/modules/webhooks/signing.js';
import type { WebhookRow } from '../../src/modules/webhooks/webhooks.presenter.js';
import { type Answer, Receiver } from './receiver.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('the answer of an endpoint', () => {
  const receiver = new Receiver();
  beforeAll(() => receiver.start());
  afterAll(() => receiver.close());

  let n = 0;
  const event = (): EventRow => ({
    seq: ++n,
    id: `evt_answers${n}`,
    network_id: 'net_answers',
    type: 'user.created',
    time: Date.now(),
    actor: JSON.stringify({ type: 'system', id: null, name: 'test' }),
    data: JSON.stringify({ user: { id: 'usr_1' } }),
    webhook_id: null,
  });
  const webhook = (path: string): WebhookRow => ({
    id: 'whk_answers',
    network_id: 'net_answers',
    url: `${receiver.url}${path}`,
    events: '["*"]',
    description: '',
    enabled: 1,
    disabled_reason: null,
    secret: generateWebhookSecret(),
    previous_secret: null,
    previous_secret_until: null,
    created_at: 0,
    last_delivery_at: null,
    event_cursor: 0,
    lease_owner: null,
    lease_until: 0,
  });

  /** The first attempt of a fresh delivery to an endpoint that answers `answer`; the wait it leaves. */
  async function attempt(path: string, answer: number | Answer, timeoutMs = 15_000, allowPrivate = true) {
    receiver.script(path, [answer]);
    const before = Date.now();
    const outcome = await attemptDelivery(webhook(path), event(), 0, {
      allowPrivate,
      timeoutMs,
      schedule: RETRY_SCHEDULE_MS,
    });
    return { outcome, wait: outcome.nextAttempt === null ? null : outcome.nextAttempt - before };
  }

  it('counts a 2xx, and not a 3xx, whose Location is not followed', async () => {
    expect((await attempt('/ok', 204)).outcome).toMatchObject({ state: 'delivered', status: 204 });
    const moved = await attempt('/moved', { status: 302, headers: { location: '/ok' } });
    expect(moved.outcome).toMatchObject({ state: 'pending', status: 302, error: 'HTTP 302' });
    expect(receiver.at('/moved')).toHaveLength(1);
    expect(receiver.at('/ok')).toHaveLength(1);
  });

  it('counts as failed a 2xx that comes after the deadline', async () => {
    const late = await attempt('/late', { status: 200, delayMs: 400 }, 200);
    expect(late.outcome).toMatchObject({ state: 'pending', status: null, error: 'no answer within 0.2 s' });
    expect(receiver.at('/late')).toHaveLength(1);
  });

  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 24 h, then fails the delivery', async () => {
    const steps = [5, 300, 1_800, 7_200, 18_000, 36_000, 86_400].map((s) => s * 1000);
    const options = { allowPrivate: true, timeoutMs: 15_000, schedule: RETRY_SCHEDULE_MS };
    const hook = webhook('/schedule');
    const delivery = event();
    for (const [before, step] of steps.entries()) {
      receiver.script('/schedule', [500]);
      const at = Date.now();
      const outcome = await attemptDelivery(hook, delivery, before, options);
      expect(outcome).toMatchObject({ state: 'pending', attempts: before + 1 });
      expect(outcome.nextAttempt! - at).toBeGreaterThanOrEqual(step);
      expect(outcome.nextAttempt! - Date.now()).toBeLessThanOrEqual(step * 1.1);
    }
    receiver.script('/schedule', [500]);
    const last = await attemptDelivery(hook, delivery, steps.length, options);
    expect(last).toMatchObject({ state: 'failed', attempts: 8, status: 500, nextAttempt: null });
    expect(new Set(receiver.at('/schedule').map((r) => r.headers['webhook-id']))).toEqual(new Set([delivery.id]));
  });

  it('never retries sooner than the schedule says, jitter included', async () => {
    for (let i = 0; i < 20; i++) {
      const { wait } = await attempt('/down', 500);
      // 5 s, and up to 10 % more so that failures together are not retried together.
      expect(wait).toBeGreaterThanOrEqual(5_000);
      expect(wait).toBeLessThanOrEqual(5_500 + 50);
    }
  });

  it.each([
    ['0', 5_000],
    ['1', 5_000],
  ])('keeps the scheduled step when Retry-After (%s) asks for less', async (retryAfter, least) => {
    const { outcome, wait } = await attempt('/busy', { status: 503, headers: { 'retry-after': retryAfter } });
    expect(outcome).toMatchObject({ state: 'pending', status: 503 });
    expect(wait).toBeGreaterThanOrEqual(least);
  });

  it('waits as long as Retry-After asks when that is longer, in seconds or as a date', async () => {
    const seconds = await attempt('/busy', { status: 429, headers: { 'retry-after': '3600' } });
    expect(seconds.wait).toBeGreaterThanOrEqual(HOUR);
    expect(seconds.wait).toBeLessThan(HOUR + 1_000);
    const at = new Date(Date.now() + 2 * HOUR).toUTCString();
    const dated = await attempt('/busy', { status: 503, headers: { 'retry-after': at } });
    expect(dated.wait).toBeGreaterThan(2 * HOUR - 2_000);
    expect(dated.wait).toBeLessThan(2 * HOUR + 2_000);
  });

  it('waits at most a day, whatever Retry-After asks', async () => {
    const absurd = await attempt('/busy', { status: 503, headers: { 'retry-after': '99999999999' } });
    expect(absurd.outcome.state).toBe('pending');
    expect(absurd.wait).toBeGreaterThanOrEqual(DAY);
    expect(absurd.wait).toBeLessThan(DAY + 1_000);
  });

  it('is not asked for at all when the target is no longer allowed', async () => {
    // Stored while the server allowed private targets (an address, not a name, so no lookup
    // runs), then served by one that does not: refused at delivery, not only when it was given.
    const refused = await attempt('/private', 204, 15_000, false);
    expect(refused.outcome).toMatchObject({ state: 'pending', status: null });
    expect(refused.outcome.error).toMatch(/127\.0\.0\.1|https/);
    expect(receiver.at('/private')).toEqual([]);
  });

  it('is signed by the previous secret too for the 24 h after a rotation, then by the new one only', async () => {
    const options = { allowPrivate: true, timeoutMs: 15_000, schedule: RETRY_SCHEDULE_MS };
    const [current, previous] = [generateWebhookSecret(), generateWebhookSecret()];
    const rotated = (until: number) => ({
      ...webhook('/rotated'),
      secret: current,
      previous_secret: previous,
      previous_secret_until: until,
    });
    await attemptDelivery(rotated(Date.now() + HOUR), event(), 0, options);
    await attemptDelivery(rotated(Date.now() - 1), event(), 0, options);
    const [during, after] = receiver.at('/rotated');
    const verify = (secret: string, r: typeof during) =>
      new Webhook(secret).verify(r!.body, r!.headers as Record<string, string>);
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => verify(current, during)).not.toThrow();
    expect(() => verify(previous, during)).not.toThrow();
    expect(String(after!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => verify(current, after)).not.toThrow();
    expect(() => verify(previous, after)).toThrow();
  });
});

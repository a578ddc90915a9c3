import { startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warren, WarrenError } from '../src/index.js';

/**
 * A fetch that answers the first `times` calls with the rate limiter's 429 and passes the rest
 * to the real server, keeping when each call was sent and its body. The real limiter refuses
 * only once a key's minute is spent, which cannot be placed in front of one chosen call.
 */
function throttledFetch(times: number) {
  const calls: string[] = [];
  const sent: { at: number; body: unknown }[] = [];
  let left = times;
  const wrapped: typeof fetch = async (input, init) => {
    calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
    sent.push({ at: Date.now(), body: init?.body });
    if (left > 0) {
      left--;
      return new Response(JSON.stringify({ status: 429, code: 'rate_limited', detail: 'slow down' }), {
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
      });
    }
    return fetch(input, init);
  };
  return { fetch: wrapped, calls, sent };
}

/** The call was sent twice, the second time after Retry-After's second, with the same body. */
function expectRetriedIntact(throttled: ReturnType<typeof throttledFetch>, call: string) {
  expect(throttled.calls).toEqual([call, call]);
  const [first, second] = throttled.sent;
  expect(second.at - first.at).toBeGreaterThanOrEqual(950);
  expect(typeof first.body).toBe('string');
  expect(second.body).toBe(first.body);
}

describe('Warren client: 429 handling', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { apiRateLimit: 3 } });
  });
  afterAll(() => server.close());

  it('waits Retry-After and retries an idempotent call', async () => {
    const throttled = throttledFetch(1);
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, fetch: throttled.fetch });
    const started = Date.now();
    const network = await warren.network.get();
    expect(network.id).toBe(server.networkId);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(throttled.calls).toEqual(['GET /v1/network', 'GET /v1/network']);
  });

  // A 429 comes from the rate limiter before any handler runs: a refused POST or PATCH did
  // nothing, so it is waited out and sent again like a read, with no option needed.
  it('waits Retry-After and retries a POST, body intact', async () => {
    server.clock.advance(61_000);
    const throttled = throttledFetch(1);
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, fetch: throttled.fetch });
    const key = await warren.keys.create({ type: 'auth', description: 'retried after a 429', expiresIn: '1h' });
    expect(key).toMatchObject({ type: 'auth', description: 'retried after a 429' });
    expectRetriedIntact(throttled, 'POST /v1/keys');
    expect(JSON.parse(String(throttled.sent[1].body))).toEqual({
      type: 'auth',
      description: 'retried after a 429',
      expiresIn: '1h',
    });
  });

  it('waits Retry-After and retries a PATCH, body intact', async () => {
    server.clock.advance(61_000);
    const hook = await new Warren({ url: server.url, apiKey: server.apiKey }).webhooks.create({
      url: 'https://hooks.example.com/warren',
      events: ['device.*'],
    });
    const throttled = throttledFetch(1);
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, fetch: throttled.fetch });
    const updated = await warren.webhooks.update(hook.id, { description: 'renamed after a 429', enabled: false });
    expect(updated).toMatchObject({ id: hook.id, description: 'renamed after a 429', enabled: false });
    expectRetriedIntact(throttled, `PATCH /v1/webhooks/${hook.id}`);
  });

  it("with retries off, a POST's 429 is thrown as rate_limited at once", async () => {
    const off = throttledFetch(1);
    const client = new Warren({ url: server.url, apiKey: server.apiKey, fetch: off.fetch, maxRetries: 0 });
    const refused = await client.keys.create({ description: 'never made' }).catch((e) => e);
    const once = throttledFetch(1);
    const oneCall = new Warren({ url: server.url, apiKey: server.apiKey, fetch: once.fetch });
    const refusedOnce = await oneCall.users.create({ loginName: 'ana@example.com' }, { retry: false }).catch((e) => e);
    for (const error of [refused, refusedOnce]) {
      expect(error).toBeInstanceOf(WarrenError);
      expect(error).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 1 });
    }
    expect(off.calls).toEqual(['POST /v1/keys']);
    expect(once.calls).toEqual(['POST /v1/users']);
  });

  it('gives up after maxRetries and surfaces the 429', async () => {
    const throttled = throttledFetch(5);
    const warren = new Warren({
      url: server.url,
      apiKey: server.apiKey,
      fetch: throttled.fetch,
      maxRetries: 1,
      maxRetryWait: 1,
    });
    const error = await warren.network.get().catch((e) => e);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(throttled.calls).toHaveLength(2);
  });

  it('maxRetries: 0 turns retrying off', async () => {
    const throttled = throttledFetch(1);
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, fetch: throttled.fetch, maxRetries: 0 });
    await expect(warren.network.get()).rejects.toMatchObject({ code: 'rate_limited' });
    expect(throttled.calls).toHaveLength(1);
  });

  it('the real server refuses the 4th call in a minute with Retry-After and rate_limited', async () => {
    server.clock.advance(61_000);
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await warren.network.get();
    const error = await warren.network.get().catch((e) => e);
    expect(error).toBeInstanceOf(WarrenError);
    expect(error).toMatchObject({ status: 429, code: 'rate_limited' });
    expect(error.retryAfter).toBeGreaterThanOrEqual(1);
  });

  it('a real 429 is waited out and retried once the window moves on', async () => {
    server.clock.advance(61_000);
    // Records what the real server answered; after its second 429 the window moves on, so the
    // retry must first be refused again and then get through (no timer racing the request).
    const statuses: number[] = [];
    const observed: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      statuses.push(res.status);
      if (statuses.filter((s) => s === 429).length === 2) server.clock.advance(61_000);
      return res;
    };
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, maxRetryWait: 0.05, fetch: observed });
    for (let i = 0; i < 3; i++) await warren.network.get();
    expect((await warren.network.get()).id).toBe(server.networkId);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 200]);
  });

  it('an abort signal cancels the wait', async () => {
    const throttled = throttledFetch(5);
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, fetch: throttled.fetch });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 50);
    await expect(warren.network.get({ signal: controller.signal })).rejects.toThrow('stop');
  });
});

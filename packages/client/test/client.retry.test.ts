import { startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Warren, WarrenError } from '../src/index.js';

/** A fetch that answers the first `times` calls with a 429 and passes the rest to the real server. */
function throttledFetch(times: number) {
  const calls: string[] = [];
  let left = times;
  const wrapped: typeof fetch = async (input, init) => {
    calls.push(`${init?.method ?? 'GET'} ${new URL(String(input)).pathname}`);
    if (left > 0) {
      left--;
      return new Response(JSON.stringify({ status: 429, code: 'rate_limited', detail: 'slow down' }), {
        status: 429,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '1' },
      });
    }
    return fetch(input, init);
  };
  return { fetch: wrapped, calls };
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

  it('does not retry a POST unless asked, and retries it with { retry: true }', async () => {
    const once = throttledFetch(1);
    const warren = new Warren({ url: server.url, apiKey: server.apiKey, fetch: once.fetch, maxRetryWait: 1 });
    const refused = await warren.users.create({ loginName: 'ana@example.com' }).catch((e) => e);
    expect(refused).toBeInstanceOf(WarrenError);
    expect(refused).toMatchObject({ status: 429, code: 'rate_limited', retryAfter: 1 });
    expect(once.calls).toHaveLength(1);

    const again = throttledFetch(1);
    const retrying = new Warren({ url: server.url, apiKey: server.apiKey, fetch: again.fetch, maxRetryWait: 1 });
    server.clock.advance(61_000);
    const user = await retrying.users.create({ loginName: 'ana@example.com' }, { retry: true });
    expect(user.loginName).toBe('ana@example.com');
    expect(again.calls).toEqual(['POST /v1/users', 'POST /v1/users']);
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

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createLoginLink } from '../../src/modules/sessions/login-links.js';
import { openStorage } from '../../src/storage/database.js';
import { backend, json, startServer, type TestServer } from '../harness.js';
import { Browser } from '../people/browser.js';

describe('rate limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { apiRateLimit: 100, anonymousRateLimit: 20 } });
  });
  afterAll(() => server.close());

  it('allows 100 requests a minute per key and refuses the 101st with 429 and Retry-After', async () => {
    const key = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'poller', scopes: ['read'] } }),
    );
    for (let i = 1; i <= 100; i++) {
      const res = await server.call('GET', '/v1/network', { key: key.key });
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('100');
      expect(res.headers.get('ratelimit-remaining')).toBe(String(100 - i));
      expect(res.headers.get('ratelimit-reset')).toMatch(/^[1-9][0-9]*$/);
    }
    const refused = await server.call('GET', '/v1/network', { key: key.key });
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await json(refused)).toMatchObject({ status: 429, code: 'rate_limited' });
    // The refusal carries the RateLimit headers too, the reset no later than Retry-After says.
    expect(refused.headers.get('ratelimit-remaining')).toBe('0');
    expect(Number(refused.headers.get('ratelimit-reset'))).toBeLessThanOrEqual(retryAfter);
    // Another key is not affected.
    expect((await server.call('GET', '/v1/network')).status).toBe(200);
    // The window slides: a minute later the key works again.
    server.clock.advance(60_001);
    expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
  });

  it('honours a per-key rateLimit', async () => {
    const key = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'tight', scopes: ['read'], rateLimit: 3 } }),
    );
    for (let i = 0; i < 3; i++) expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
    expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(429);
  });

  it('changes nothing with a refused write: 429 for the key over its limit, 403 for one without the scope', async () => {
    const key = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'writer', scopes: ['users'], rateLimit: 1 } }),
    );
    const reader = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'reader', scopes: ['read'] } }),
    );
    const add = (loginName: string, apiKey: string) =>
      server.call('POST', '/v1/users', { key: apiKey, body: { loginName } });
    expect((await add('first@example.com', key.key)).status).toBe(201);
    expect((await add('second@example.com', key.key)).status).toBe(429);
    expect((await add('third@example.com', reader.key)).status).toBe(403);
    const users = (await json(await server.call('GET', '/v1/users'))).users.map(
      (u: { loginName: string }) => u.loginName,
    );
    expect(users).toContain('first@example.com');
    expect(users).not.toContain('second@example.com');
    expect(users).not.toContain('third@example.com');
  });

  it('is a sliding window: no 60-second span ever sees more than the limit', async () => {
    const key = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'slide', scopes: ['read'], rateLimit: 4 } }),
    );
    const hit = () => server.call('GET', '/v1/network', { key: key.key }).then((r) => r.status);
    expect(await hit()).toBe(200); // t=0
    server.clock.advance(30_000);
    expect([await hit(), await hit(), await hit()]).toEqual([200, 200, 200]); // t=30
    expect(await hit()).toBe(429);
    server.clock.advance(30_001); // t=60.001: the first hit left the window, the three at t=30 have not
    expect(await hit()).toBe(200);
    expect(await hit()).toBe(429);
  });

  it('limits callers without a valid key per client address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 21; i++) statuses.push((await server.call('GET', '/v1/devices', { key: null })).status);
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses[20]).toBe(429);
  });
});

describe.runIf(backend === 'postgres')('rate limits across instances (PostgreSQL)', () => {
  it('shares one budget between two servers on one database', async () => {
    const server = await startServer({ settings: { apiRateLimit: 10 } });
    const { url, schema } = server.database;
    const second = await openStorage(url, { schema, poolSize: 2 });
    const other = await buildApp({ storage: second, clock: server.clock, settings: { apiRateLimit: 10 } });
    await other.listen({ host: '127.0.0.1', port: 0 });
    const address = other.server.address();
    const otherUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const base = i % 2 === 0 ? server.url : otherUrl;
        const res = await fetch(`${base}/v1/network`, { headers: { authorization: `Bearer ${server.apiKey}` } });
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.slice(10)).toEqual([429, 429]);
    } finally {
      await other.close();
      await second.close();
      await server.close();
    }
  });

  it('counts concurrent requests to two servers exactly: never more than the limit get through', async () => {
    const server = await startServer({ settings: { apiRateLimit: 10 } });
    const { url, schema } = server.database;
    const second = await openStorage(url, { schema, poolSize: 4 });
    const other = await buildApp({ storage: second, clock: server.clock, settings: { apiRateLimit: 10 } });
    await other.listen({ host: '127.0.0.1', port: 0 });
    const address = other.server.address();
    const otherUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      const statuses = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          fetch(`${i % 2 === 0 ? server.url : otherUrl}/v1/network`, {
            headers: { authorization: `Bearer ${server.apiKey}` },
          }).then((res) => res.status),
        ),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(10);
      expect(statuses.filter((s) => s === 429)).toHaveLength(20);
    } finally {
      await other.close();
      await second.close();
      await server.close();
    }
  });
});

describe("a console session's rate limit", () => {
  it('gives a person 600 calls a minute of their own, while API keys keep 100', async () => {
    const server = await startServer({ settings: { apiRateLimit: 100 } });
    try {
      const users = await json(await server.call('GET', '/v1/users'));
      const token = await createLoginLink(
        server.database.storage.db,
        server.networkId,
        users.users[0].id,
        server.clock.now(),
      );
      const browser = new Browser();
      expect((await browser.get(`${server.url}/auth/link?token=${token}`)).status).toBe(303);
      for (let i = 1; i <= 600; i++) {
        const res = await browser.get(`${server.url}/v1/network`);
        expect(res.status).toBe(200);
        expect(res.headers.get('ratelimit-limit')).toBe('600');
      }
      const refused = await browser.get(`${server.url}/v1/network`);
      expect(refused.status).toBe(429);
      expect(await json(refused)).toMatchObject({ code: 'rate_limited' });
      // The session's budget is its own: the network's API key (one call so far) is not charged for it.
      const key = await server.call('GET', '/v1/network');
      expect(key.headers.get('ratelimit-limit')).toBe('100');
      expect(key.headers.get('ratelimit-remaining')).toBe('98');
    } finally {
      await server.close();
    }
  });
});

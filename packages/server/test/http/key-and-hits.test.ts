/**
 * PostgreSQL: an API key's row and the call's rate-limit hit come from one statement
 * (http/authenticate.ts), and calls made with one key while it is in flight share the next.
 * The limit stays exact, a revocation through another instance still stops the key on the very
 * next call, and a refused key's calls are not counted against it.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { AppContext } from '../../src/core/context.js';
import { WINDOW_MS } from '../../src/edge/rate-limiter.js';
import { openStorage } from '../../src/storage/database.js';
import { backend, json, startServer, type TestServer } from '../harness.js';

describe.runIf(backend === 'postgres')("an API key's check and its rate-limit hit in one statement", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { apiRateLimit: 10 } });
  });
  afterAll(() => server.close());

  const newKey = async (rateLimit?: number) =>
    json(
      await server.call('POST', '/v1/keys', {
        body: { type: 'api', name: 'poller', scopes: ['read'], ...(rateLimit ? { rateLimit } : {}) },
      }),
    );

  /** The key's hits stored in the window that ends now. */
  const counted = async (keyId: string): Promise<number> => {
    const { rows } = await sql<{ hits: number | null }>`
      select sum(hits) as hits from rate_limit_slots
      where bucket = ${`key:${keyId}`} and at > ${server.clock.now() - WINDOW_MS}`.execute(server.app.ctx.db);
    return Number(rows[0]?.hits ?? 0);
  };

  /** The buckets the limiter is asked about while `run` runs. */
  const limiterBuckets = async (run: () => Promise<void>): Promise<string[]> => {
    const ctx: AppContext = server.app.ctx;
    const hit = ctx.limiter.hit;
    const buckets: string[] = [];
    ctx.limiter.hit = (bucket, limit) => {
      buckets.push(bucket);
      return hit.call(ctx.limiter, bucket, limit);
    };
    try {
      await run();
    } finally {
      ctx.limiter.hit = hit;
    }
    return buckets;
  };

  it("counts every call in the key's statement: the limiter is not asked, and the database holds each hit once", async () => {
    const key = await newKey(5);
    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    const asked = await limiterBuckets(async () => {
      for (let i = 0; i < 7; i++) {
        const res = await server.call('GET', '/v1/network', { key: key.key });
        statuses.push(res.status);
        remaining.push(res.headers.get('ratelimit-remaining'));
      }
    });
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(remaining).toEqual(['4', '3', '2', '1', '0', '0', '0']);
    expect(asked).toEqual([]);
    expect(await counted(key.id)).toBe(5);
  });

  it('decides calls made together with one key in arrival order, each remaining count once', async () => {
    const key = await newKey(10);
    const responses = await Promise.all(
      Array.from({ length: 40 }, () => server.call('GET', '/v1/network', { key: key.key })),
    );
    const allowed = responses.filter((res) => res.status === 200);
    const refused = responses.filter((res) => res.status === 429);
    expect(allowed).toHaveLength(10);
    expect(refused).toHaveLength(30);
    expect(allowed.map((res) => Number(res.headers.get('ratelimit-remaining'))).sort((a, b) => a - b)).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
    for (const res of refused) expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await counted(key.id)).toBe(10);
  });

  it('refuses at once a key revoked through another instance, and counts its refused calls against the address', async () => {
    const { url, schema } = server.database;
    const storage = await openStorage(url, { schema, poolSize: 2 });
    const other = await buildApp({ storage, clock: server.clock, settings: { apiRateLimit: 10 } });
    const otherUrl = await other.listen({ host: '127.0.0.1', port: 0 });
    try {
      const key = await newKey();
      expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
      const revoked = await fetch(`${otherUrl}/v1/keys/${key.id}`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${server.apiKey}` },
      });
      expect(revoked.status).toBe(204);
      const asked = await limiterBuckets(async () => {
        const res = await server.call('GET', '/v1/network', { key: key.key });
        expect(res.status).toBe(401);
        expect((await json(res)).code).toBe('key_revoked');
      });
      expect(asked).toEqual([expect.stringMatching(/^addr:/)]);
      expect(await counted(key.id)).toBe(1);
    } finally {
      await other.close();
      await storage.close();
    }
  });

  it('refuses an expired key without counting the call against it', async () => {
    const res = await server.call('POST', '/v1/keys', {
      body: { type: 'api', name: 'short', scopes: ['read'], expiresIn: '90s' },
    });
    const key = await json(res);
    expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
    // Past the expiry and the first call's window: a refused call counted against the key
    // would be its only live hit.
    server.clock.advance(91_000);
    expect(await counted(key.id)).toBe(0);
    const refused = await server.call('GET', '/v1/network', { key: key.key });
    expect(refused.status).toBe(401);
    expect((await json(refused)).code).toBe('key_expired');
    expect(await counted(key.id)).toBe(0);
  });
});

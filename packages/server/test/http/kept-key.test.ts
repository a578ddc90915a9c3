/**
 * SQLite: a call whose key is kept since the last commit is authenticated and counted without a
 * promise (http/pipeline.ts, `authenticateCallNow`). The decisions are those of the full path:
 * the limit exact with its headers, an expired key refused at once while its row is kept.
 * A burst is sent right after a call that kept the key, before the audit writer's next commit
 * empties the cache; a burst the writer's commit overtook is sent again with a new key.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppContext } from '../../src/core/context.js';
import { backend, json, startServer, type TestServer } from '../harness.js';

describe.runIf(backend === 'sqlite')('a kept API key decided without a promise', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  /** How often the limiter decided without a promise while `run` ran. */
  const decidedNow = async (run: () => Promise<void>): Promise<number> => {
    const limiter: AppContext['limiter'] = server.app.ctx.limiter;
    const hitNow = limiter.hitNow!;
    let count = 0;
    limiter.hitNow = (bucket, limit) => {
      count++;
      return hitNow.call(limiter, bucket, limit);
    };
    try {
      await run();
    } finally {
      limiter.hitNow = hitNow;
    }
    return count;
  };

  const newKey = async (body: Record<string, unknown>) =>
    json(await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'burst', scopes: ['read'], ...body } }));

  it('counts a burst exactly, with its headers, as the full path would', async () => {
    let fast = 0;
    for (let attempt = 0; attempt < 5 && fast === 0; attempt++) {
      const key = await newKey({ rateLimit: 10 });
      await server.app.ctx.audit.settled();
      expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
      let responses: Response[] = [];
      fast = await decidedNow(async () => {
        responses = await Promise.all(
          Array.from({ length: 20 }, () => server.call('GET', '/v1/network', { key: key.key })),
        );
      });
      const allowed = responses.filter((res) => res.status === 200);
      const refused = responses.filter((res) => res.status === 429);
      expect(allowed).toHaveLength(9);
      expect(refused).toHaveLength(11);
      expect(allowed.map((res) => Number(res.headers.get('ratelimit-remaining'))).sort((a, b) => a - b)).toEqual([
        0, 1, 2, 3, 4, 5, 6, 7, 8,
      ]);
      for (const res of refused) {
        expect(res.headers.get('ratelimit-remaining')).toBe('0');
        expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect((await json(res)).code).toBe('rate_limited');
      }
    }
    expect(fast).toBeGreaterThan(0);
  });

  it('refuses a kept key the moment it expires', async () => {
    for (let attempt = 0; attempt < 3; attempt++) {
      const key = await newKey({ expiresIn: '90s' });
      await server.app.ctx.audit.settled();
      expect((await server.call('GET', '/v1/network', { key: key.key })).status).toBe(200);
      server.clock.advance(91_000);
      const responses = await Promise.all(
        Array.from({ length: 5 }, () => server.call('GET', '/v1/network', { key: key.key })),
      );
      for (const res of responses) {
        expect(res.status).toBe(401);
        expect((await json(res)).code).toBe('key_expired');
      }
    }
  });
});

/**
 * Node calls are limited per device (docs/API.md, the node protocol), with the management
 * API's headers and 429. On PostgreSQL the hit is counted in the credential's own statement;
 * with several instances the budget is shared, as an API key's is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../../src/app.js';
import { openStorage } from '../../../src/storage/database.js';
import { auditEntries, createAuthKey, enroll, expectProblem, nodeCall } from '../../devices/helpers.js';
import { backend, json, startServer, type TestServer } from '../../harness.js';
import { createUser } from '../../netmap/helpers.js';

const LIMIT = 4;

describe('per-device rate limit', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    server = await startServer({ settings: { deviceRateLimit: LIMIT } });
    authKey = (await createAuthKey(server, { reusable: true })).key;
  });
  afterAll(() => server.close());

  it('allows the limit a minute per device, then answers 429 with Retry-After', async () => {
    const { nodeToken } = await enroll(server, authKey, { hostname: 'busy' });
    const remaining: string[] = [];
    for (let i = 0; i < LIMIT; i++) {
      const res = await nodeCall(server, nodeToken, 'heartbeat');
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe(String(LIMIT));
      remaining.push(res.headers.get('ratelimit-remaining')!);
    }
    expect(remaining).toEqual(['3', '2', '1', '0']);
    const refused = await nodeCall(server, nodeToken, 'heartbeat');
    const problem = await expectProblem(refused, 429, 'rate_limited');
    expect(problem.detail).toContain('device');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another device has its own budget; the first gets its back a minute later.
    const other = await enroll(server, authKey, { hostname: 'calm' });
    expect((await nodeCall(server, other.nodeToken, 'heartbeat')).status).toBe(200);
    server.clock.advance(60_000);
    expect((await nodeCall(server, nodeToken, 'heartbeat')).status).toBe(200);
  });

  it('refuses a suspended user’s device with 401 without counting the call, audited as the device', async () => {
    await createUser(server, 'sam@example.com');
    const userKey = (await createAuthKey(server, { reusable: true, user: 'sam@example.com' })).key;
    const { device, nodeToken } = await enroll(server, userKey, { hostname: 'sams' });
    const users = (await json(await server.call('GET', '/v1/users'))).users as { id: string; loginName: string }[];
    const sam = users.find((u) => u.loginName === 'sam@example.com')!;
    expect((await server.call('PATCH', `/v1/users/${sam.id}`, { body: { status: 'suspended' } })).status).toBe(200);
    for (let i = 0; i < LIMIT + 2; i++) {
      await expectProblem(await nodeCall(server, nodeToken, 'heartbeat'), 401, 'unauthenticated');
    }
    // The credential is known, so its refusals are in the network's log under the device (as a
    // revoked API key's are under the key), where an admin looks for devices still calling.
    const refused = (await auditEntries(server)).filter((e) => e.path === '/v1/node/heartbeat' && e.status === 401);
    expect(refused).toHaveLength(LIMIT + 2);
    expect(refused.every((e) => e.deviceId === device.id && e.keyId === null)).toBe(true);
    expect((await server.call('PATCH', `/v1/users/${sam.id}`, { body: { status: 'active' } })).status).toBe(200);
    const restored = await nodeCall(server, nodeToken, 'heartbeat');
    expect(restored.status).toBe(200);
    expect(restored.headers.get('ratelimit-remaining')).toBe(String(LIMIT - 1));
  });
});

describe.runIf(backend === 'postgres')('per-device rate limit across instances (PostgreSQL)', () => {
  it('shares one budget between two servers on one database', async () => {
    const server = await startServer({ settings: { deviceRateLimit: LIMIT } });
    const authKey = (await createAuthKey(server, { reusable: true })).key;
    const { url, schema } = server.database;
    const second = await openStorage(url, { schema, poolSize: 2 });
    const other = await buildApp({ storage: second, clock: server.clock, settings: { deviceRateLimit: LIMIT } });
    await other.listen({ host: '127.0.0.1', port: 0 });
    const address = other.server.address();
    const otherUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    try {
      const { nodeToken } = await enroll(server, authKey, { hostname: 'roaming' });
      const statuses = await Promise.all(
        Array.from({ length: LIMIT * 3 }, (_, i) =>
          fetch(`${i % 2 === 0 ? server.url : otherUrl}/v1/node/heartbeat`, {
            method: 'POST',
            headers: { authorization: `Bearer ${nodeToken}`, 'content-type': 'application/json' },
            body: '{}',
          }).then((res) => res.status),
        ),
      );
      expect(statuses.filter((s) => s === 200)).toHaveLength(LIMIT);
      expect(statuses.filter((s) => s === 429)).toHaveLength(LIMIT * 2);
    } finally {
      await other.close();
      await second.close();
      await server.close();
    }
  });
});

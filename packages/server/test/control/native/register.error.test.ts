import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTags } from '../../acl/helpers.js';
import {
  countDevices,
  createAuthKey,
  deviceRow,
  enroll,
  expectProblem,
  newNodeKey,
  register,
} from '../../devices/helpers.js';
import { json, startServer, type TestServer } from '../../harness.js';

describe('POST /v1/node/register refusals', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:race']);
  });
  afterAll(() => server.close());

  async function expect401(res: Response, code: string) {
    const body = await expectProblem(res, 401, code);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="warren", error="invalid_token"');
    return body;
  }

  it('refuses an expired key with key_expired', async () => {
    const key = await createAuthKey(server, { expiresIn: '60s', reusable: true });
    await enroll(server, key.key);
    server.clock.advance(60_000);
    await expect401(await register(server, key.key), 'key_expired');
  });

  it('refuses a revoked key with key_revoked', async () => {
    const key = await createAuthKey(server, { reusable: true });
    expect((await server.call('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
    await expect401(await register(server, key.key), 'key_revoked');
  });

  it('refuses a used single-use key with key_revoked and says why', async () => {
    const key = await createAuthKey(server);
    await enroll(server, key.key);
    const body = await expect401(await register(server, key.key), 'key_revoked');
    expect(body.detail).toContain('single-use');
  });

  it('refuses garbage, a missing header, an unknown key and an API key with unauthenticated', async () => {
    await expect401(await register(server, 'garbage'), 'unauthenticated');
    await expect401(await register(server, null), 'unauthenticated');
    const key = await createAuthKey(server);
    // right shape, wrong checksum
    await expect401(
      await register(server, `${key.key.slice(0, -1)}${key.key.endsWith('A') ? 'B' : 'A'}`),
      'unauthenticated',
    );
    expect((await server.call('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
    const body = await expect401(await register(server, server.apiKey), 'unauthenticated');
    expect(body.detail).toContain('API key');
  });

  it('enrolls exactly one device when 20 registrations race for one single-use key', async () => {
    const key = await createAuthKey(server, { tags: ['tag:race'] });
    const before = await countDevices(server);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => register(server, key.key, { hostname: `race-${i}` })),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 401)).toHaveLength(19);
    for (const res of responses) if (res.status === 401) expect((await json(res)).code).toBe('key_revoked');
    expect(await countDevices(server)).toBe(before + 1);
    expect(await json(await server.call('GET', `/v1/keys/${key.id}`))).toMatchObject({ uses: 1, state: 'used' });
  });

  it('refuses a malformed nodeKey and unknown fields, changing nothing', async () => {
    const key = await createAuthKey(server);
    const before = await countDevices(server);
    await expectProblem(await register(server, key.key, { nodeKey: 'nodekey:abc' }), 400, 'invalid_request');
    await expectProblem(
      await register(server, key.key, { nodeKey: `nodekey:${'G'.repeat(64)}` }),
      400,
      'invalid_request',
    );
    await expectProblem(await register(server, key.key, { extra: 1 }), 400, 'unknown_field');
    await expectProblem(await register(server, key.key, { hostname: '' }), 400, 'invalid_request');
    await expectProblem(await register(server, key.key, { advertiseRoutes: ['10.0.0.1/24'] }), 400, 'invalid_prefix');
    const long = `10.0.0.0/${'0'.repeat(80)}24`;
    await expectProblem(await register(server, key.key, { advertiseRoutes: [long] }), 400, 'invalid_prefix');
    expect(await countDevices(server)).toBe(before);
    // the single-use key was not spent by the refused attempts
    expect(await json(await server.call('GET', `/v1/keys/${key.id}`))).toMatchObject({ uses: 0, state: 'valid' });
    await enroll(server, key.key);
  });

  it('rate-limits enrollments per auth key', async () => {
    const limited = await startServer({ settings: { enrollRateLimit: 2 } });
    try {
      const key = await createAuthKey(limited, { reusable: true });
      await enroll(limited, key.key);
      await enroll(limited, key.key);
      const res = await register(limited, key.key);
      await expectProblem(res, 429, 'rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      limited.clock.advance(60_000);
      await enroll(limited, key.key);
    } finally {
      await limited.close();
    }
  });

  it('rate-limits callers without a usable key per client address', async () => {
    const limited = await startServer({ settings: { anonymousRateLimit: 3 } });
    try {
      for (let i = 0; i < 3; i++) expect((await register(limited, 'garbage')).status).toBe(401);
      await expectProblem(await register(limited, 'garbage'), 429, 'rate_limited');
    } finally {
      await limited.close();
    }
  });
});

describe('plan limits', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ plan: 'free' });
  });
  afterAll(() => server.close());

  it('refuses the 101st device of a free network with plan_limit and enrolls nothing', async () => {
    // 99 devices inserted directly, to keep the test fast
    const now = server.clock.now();
    await server.database.storage.db
      .insertInto('devices')
      .values(
        Array.from({ length: 99 }, (_, i) =>
          deviceRow({
            id: `dev_fill${i}`,
            networkId: server.networkId,
            name: `fill-${i}`,
            addrIndex: 1000 + i,
            nodeTokenHash: `hash${i}`,
            now,
          }),
        ),
      )
      .execute();
    const key = await createAuthKey(server, { reusable: true });
    const nodeKey = newNodeKey();
    await enroll(server, key.key, { nodeKey });
    expect(await countDevices(server)).toBe(100);

    const single = await createAuthKey(server);
    const body = await expectProblem(await register(server, single.key), 403, 'plan_limit');
    expect(body.detail).toContain('100');
    expect(await countDevices(server)).toBe(100);
    expect(await json(await server.call('GET', `/v1/keys/${single.id}`))).toMatchObject({ uses: 0, state: 'valid' });

    // re-enrolling an existing device is not a new device
    expect((await register(server, key.key, { nodeKey })).status).toBe(201);
    const network = await json(await server.call('GET', '/v1/network'));
    expect(network.usage.devices).toBe(100);
  });
});

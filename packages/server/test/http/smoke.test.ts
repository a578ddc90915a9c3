import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

describe('health and discovery', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('answers /healthz and /readyz without a key', async () => {
    expect((await server.call('GET', '/healthz', { key: null })).status).toBe(200);
    const ready = await server.call('GET', '/readyz', { key: null });
    expect(ready.status).toBe(200);
    expect(await json(ready)).toEqual({ status: 'ready' });
  });

  it('serves an OpenAPI 3.1 document with named components', async () => {
    const res = await server.call('GET', '/v1/openapi.json', { key: null });
    expect(res.status).toBe(200);
    const doc = await json(res);
    expect(doc.openapi).toBe('3.1.0');
    for (const name of ['Device', 'Key', 'Problem', 'User', 'Route', 'AuditEntry']) {
      expect(doc.components.schemas).toHaveProperty(name);
    }
    expect(doc.paths['/v1/keys'].post.responses['400']).toBeDefined();
  });

  it('counts the OpenAPI document against the client address, as any call without a key', async () => {
    const first = await server.call('GET', '/v1/openapi.json', { key: null });
    expect(first.headers.get('ratelimit-limit')).toBe(String(server.app.ctx.settings.anonymousRateLimit));
    const second = await server.call('GET', '/v1/openapi.json', { key: null });
    expect(Number(second.headers.get('ratelimit-remaining'))).toBe(
      Number(first.headers.get('ratelimit-remaining')) - 1,
    );
  });

  it('returns the network with plan, limits and usage', async () => {
    const res = await server.call('GET', '/v1/network');
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ id: server.networkId, plan: 'premium', usage: { users: 1, devices: 0 } });
  });

  it('says whether single sign-on is set up, and the redirect URI to register before setting it up', async () => {
    const before = await json(await server.call('GET', '/v1/network'));
    expect(before.sso).toEqual({ configured: false, enforce: false, redirectUri: `${server.url}/auth/callback` });
    const set = await server.call('PUT', '/v1/network/sso', {
      body: { issuer: 'https://id.example.com', clientId: 'c', clientSecret: 's', enforce: true },
    });
    expect(set.status).toBe(200);
    expect((await json(set)).redirectUri).toBe(before.sso.redirectUri);
    const after = await json(await server.call('GET', '/v1/network'));
    expect(after.sso).toEqual({ configured: true, enforce: true, redirectUri: before.sso.redirectUri });
  });

  it('answers without a redirect URI while the server has no public URL', async () => {
    const bare = await startServer({ publicUrl: false });
    try {
      const res = await bare.call('GET', '/v1/network');
      expect(res.status).toBe(200);
      expect((await json(res)).sso).toEqual({ configured: false, enforce: false, redirectUri: null });
    } finally {
      await bare.close();
    }
  });
});

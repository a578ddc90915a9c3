import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

describe('log query parameters', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('documents each log with its own filter only: device for connections, key for the audit log', async () => {
    const doc = await json(await server.call('GET', '/v1/openapi.json'));
    const names = (path: string) => (doc.paths[path].get.parameters as { name: string }[]).map((p) => p.name).sort();
    expect(names('/v1/logs/connections')).toEqual(['cursor', 'device', 'limit', 'since']);
    expect(names('/v1/logs/audit')).toEqual(['changes', 'cursor', 'key', 'limit', 'since']);
  });

  it('answers a since that is no duration with invalid_duration, also when given twice', async () => {
    for (const query of ['since=1h&since=2h', `since=${'9'.repeat(20)}d`, 'since=1w']) {
      const res = await server.call('GET', `/v1/logs/audit?${query}`);
      expect(res.status).toBe(400);
      expect((await json(res)).code).toBe('invalid_duration');
    }
  });

  it('refuses an empty key filter with 400, as an empty device filter is, instead of matching nothing', async () => {
    const res = await server.call('GET', '/v1/logs/audit?key=');
    expect(res.status).toBe(400);
    expect((await json(res)).code).toBe('invalid_request');
    expect((await server.call('GET', '/v1/logs/connections?device=')).status).toBe(400);
  });

  it('shows only the calls that changed state with changes=true, paged and tailed like the whole log', async () => {
    const start = (await json(await server.call('GET', '/v1/logs/audit?limit=1000'))).nextCursor;
    for (let i = 0; i < 5; i++) await server.call('GET', '/v1/devices');
    for (const loginName of ['c1@example.com', 'c2@example.com', 'c3@example.com']) {
      expect((await server.call('POST', '/v1/users', { body: { loginName, role: 'member' } })).status).toBe(201);
      await server.call('GET', '/v1/users');
    }
    const all = await json(await server.call('GET', `/v1/logs/audit?cursor=${start}&limit=1000`));
    expect(all.entries.length).toBeGreaterThan(8);
    const changes: { action: string | null; method: string }[] = [];
    let cursor = start;
    for (;;) {
      const page = await json(await server.call('GET', `/v1/logs/audit?cursor=${cursor}&changes=true&limit=2`));
      changes.push(...page.entries);
      cursor = page.nextCursor;
      if (!page.hasMore) break;
    }
    expect(changes.map((e) => [e.method, e.action])).toEqual([
      ['POST', 'user.create'],
      ['POST', 'user.create'],
      ['POST', 'user.create'],
    ]);
    const tail = await json(await server.call('GET', `/v1/logs/audit?cursor=${cursor}&changes=true`));
    expect(tail.entries).toEqual([]);
    const bad = await server.call('GET', '/v1/logs/audit?changes=yes');
    expect(bad.status).toBe(400);
  });
});

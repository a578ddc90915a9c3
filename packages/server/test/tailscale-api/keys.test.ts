/**
 * Keys on /api/v2 as Tailscale shows them: a revoked (deleted) key keeps its record, with
 * `invalid: true` and `revoked` set to when it was revoked; a working key has `revoked: null`.
 * An auth key's body must have `capabilities.devices`, as Tailscale's API requires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

describe('/api/v2 keys', () => {
  let server: TestServer;
  const keys = (method: string, path = '', body?: unknown) =>
    server.call(method, `/api/v2/tailnet/-/keys${path}`, body === undefined ? {} : { body });

  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('says when a deleted key was revoked', async () => {
    const created = await json(await keys('POST', '', { capabilities: { devices: { create: {} } } }));
    expect(created).toMatchObject({ revoked: null, invalid: false });
    server.clock.advance(60_000);
    const revokedAt = new Date(server.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    expect((await keys('DELETE', `/${created.id}`)).status).toBe(200);
    server.clock.advance(60_000);

    const read = await json(await keys('GET', `/${created.id}`));
    expect(read).toMatchObject({ id: created.id, invalid: true, revoked: revokedAt, updated: revokedAt });
    expect(read.created).toBe(created.created);
    const listed = (await json(await keys('GET', '?all=true'))).keys.find((k: any) => k.id === created.id);
    expect(listed).toMatchObject({ invalid: true, revoked: revokedAt });
    const working = (await json(await keys('GET'))).keys;
    expect(working.length).toBeGreaterThan(0);
    for (const key of working) expect(key).toMatchObject({ invalid: false, revoked: null });
  });

  it('refuses an auth key without capabilities.devices, creating nothing', async () => {
    const before = (await json(await keys('GET'))).keys.length;
    for (const body of [{}, { capabilities: {} }, { capabilities: null, description: 'x' }]) {
      const res = await keys('POST', '', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await json(res)).toMatchObject({ status: 400, code: 'invalid_request' });
    }
    expect((await json(await keys('GET'))).keys.length).toBe(before);
    const bare = await keys('POST', '', { capabilities: { devices: {} } });
    expect(bare.status).toBe(200);
    expect(await json(bare)).toMatchObject({
      capabilities: { devices: { create: { reusable: false, ephemeral: false, preauthorized: false, tags: [] } } },
    });
  });

  it('reads all as true or false, and refuses any other value rather than listing less', async () => {
    const spent = await json(await keys('POST', '', { capabilities: { devices: {} } }));
    expect((await keys('DELETE', `/${spent.id}`)).status).toBe(200);
    const ids = async (query: string) => {
      const res = await keys('GET', query);
      expect(res.status, query).toBe(200);
      return (await json(res)).keys.map((k: any) => k.id);
    };
    expect(await ids('?all=true')).toContain(spent.id);
    expect(await ids('?all=1')).toContain(spent.id);
    for (const query of ['', '?all=false', '?all=0', '?all=']) expect(await ids(query)).not.toContain(spent.id);
    for (const query of ['?all=yes', '?all=TRUE', '?all=true&all=true']) {
      const res = await keys('GET', query);
      expect(res.status, query).toBe(400);
      expect(await json(res)).toMatchObject({
        status: 400,
        code: 'invalid_request',
        message: expect.stringMatching(/^all /),
      });
    }
  });

  it("refuses an expirySeconds past Warren's longest key lifetime in this API's terms, creating nothing", async () => {
    const before = (await json(await keys('GET', '?all=true'))).keys.length;
    for (const expirySeconds of [365 * 86_400 + 1, 99_999_999_999]) {
      const res = await keys('POST', '', { capabilities: { devices: {} }, expirySeconds });
      expect(res.status, String(expirySeconds)).toBe(400);
      const body = await json(res);
      expect(body).toMatchObject({ status: 400, code: 'invalid_duration' });
      expect(body.message).toMatch(/^expirySeconds may not exceed 31536000/);
    }
    expect((await json(await keys('GET', '?all=true'))).keys.length).toBe(before);
    // Within the limit, and within the lifetime of the key that creates it (90 days here).
    const fits = await keys('POST', '', { capabilities: { devices: {} }, expirySeconds: 80 * 86_400 });
    expect(await json(fits)).toMatchObject({ expirySeconds: 80 * 86_400 });
  });
});

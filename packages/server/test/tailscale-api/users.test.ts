/** /api/v2's users: `currentlyConnected` follows the user's own devices, and only theirs. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('/api/v2 users', () => {
  let server: TestServer;
  let userId: string;
  beforeAll(async () => {
    server = await startServer({ settings: { apiRateLimit: 100_000 } });
    const created = await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com', role: 'member' } });
    expect(created.status).toBe(201);
    userId = (await json(created)).id;
  });
  afterAll(() => server.close());

  const connected = async () => {
    const res = await server.call('GET', '/api/v2/tailnet/-/users');
    expect(res.status).toBe(200);
    const users = (await json(res)).users as any[];
    return Object.fromEntries(users.map((u) => [u.loginName, u.currentlyConnected]));
  };
  const one = async (id: string) => (await json(await server.call('GET', `/api/v2/users/${id}`))).currentlyConnected;

  it("is true while one of the user's own devices is online, not for another user's", async () => {
    expect(await connected()).toEqual({ 'owner@example.com': false, 'ana@example.com': false });
    // An auth key made with the owner's API key enrolls the owner's devices.
    await enroll(server, (await createAuthKey(server, { reusable: true })).key, { hostname: 'owners' });
    expect(await connected()).toEqual({ 'owner@example.com': true, 'ana@example.com': false });
    expect(await one(userId)).toBe(false);

    server.clock.advance(30_000);
    await enroll(server, (await createAuthKey(server, { user: 'ana@example.com' })).key, { hostname: 'ana-laptop' });
    expect(await connected()).toEqual({ 'owner@example.com': true, 'ana@example.com': true });
    expect(await one(userId)).toBe(true);

    // The owner's device times out first.
    server.clock.advance(45_000);
    expect(await connected()).toEqual({ 'owner@example.com': false, 'ana@example.com': true });
    server.clock.advance(10 * 60_000);
    expect(await connected()).toEqual({ 'owner@example.com': false, 'ana@example.com': false });
    expect(await one(userId)).toBe(false);
  });
});

/**
 * /api/v2's users: `currentlyConnected` follows the user's own devices, and only theirs; the
 * `type` and `role` filters take Tailscale's values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, heartbeat, listDevices, nodeCall } from '../devices/helpers.js';
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

  it("agrees with the user's devices as listed, across heartbeats, minute edges, a disconnect and a deletion", async () => {
    const created = await server.call('POST', '/v1/users', { body: { loginName: 'bo@example.com', role: 'member' } });
    const bo = (await json(created)).id as string;
    // The answer from the devices themselves, as /v1/devices shows their presence.
    const expected = async () => (await listDevices(server, `?user=${bo}&online=true`)).length > 0;
    const check = async (what: string) => {
      const truth = await expected();
      expect((await connected())['bo@example.com'], `list: ${what}`).toBe(truth);
      expect(await one(bo), `detail: ${what}`).toBe(truth);
      return truth;
    };
    expect(await check('no device yet')).toBe(false);

    // Heartbeats late in a minute: the user's row keeps the first of that minute, so the newest
    // heartbeat is up to a minute younger than what the row shows.
    server.clock.advance(60_000 - (server.clock.now() % 60_000) + 1_000);
    const key = (await createAuthKey(server, { user: 'bo@example.com', reusable: true })).key;
    const phone = await enroll(server, key, { hostname: 'bo-phone' });
    const laptop = await enroll(server, key, { hostname: 'bo-laptop' });
    expect(await check('just enrolled')).toBe(true);
    server.clock.advance(57_000); // 58 s into the minute
    expect((await heartbeat(server, phone.nodeToken)).status).toBe(200);
    // 59 s after the phone's heartbeat and two minutes past the row's sighting's minute start.
    server.clock.advance(59_000);
    expect(await check('heartbeat 59 s old, row a minute older')).toBe(true);
    server.clock.advance(2_000);
    expect(await check('every heartbeat older than the window')).toBe(false);

    // Back online, then the phone disconnects: the laptop alone decides.
    expect((await heartbeat(server, phone.nodeToken)).status).toBe(200);
    expect((await heartbeat(server, laptop.nodeToken)).status).toBe(200);
    expect(await check('both heartbeating')).toBe(true);
    expect((await nodeCall(server, laptop.nodeToken, 'disconnect')).status).toBeLessThan(300);
    expect(await check('laptop disconnected, phone online')).toBe(true);
    expect((await nodeCall(server, phone.nodeToken, 'disconnect')).status).toBeLessThan(300);
    expect(await check('both disconnected within the window')).toBe(false);

    // A deleted device leaves its sighting in the row; the answer still follows the devices.
    expect((await heartbeat(server, phone.nodeToken)).status).toBe(200);
    expect(await check('phone back')).toBe(true);
    expect((await server.call('DELETE', `/v1/devices/${phone.device.id}`)).status).toBe(204);
    expect(await check('phone deleted, laptop disconnected')).toBe(false);
  });

  it("takes every role and type Tailscale's client names, listing nobody for the ones Warren has none of", async () => {
    const logins = async (query: string) => {
      const res = await server.call('GET', `/api/v2/tailnet/-/users?${query}`);
      const body = await json(res);
      expect(res.status, `${query}: ${JSON.stringify(body)}`).toBe(200);
      return body.users.map((u: any) => u.loginName).sort();
    };
    expect(await logins('role=member')).toEqual(['ana@example.com', 'bo@example.com']);
    expect(await logins('role=owner&type=member')).toEqual(['owner@example.com']);
    expect(await logins('role=billing-admin')).toEqual([]);
    expect(await logins('type=shared')).toEqual([]);
    expect((await server.call('GET', '/api/v2/tailnet/-/users?role=janitor')).status).toBe(400);
    // `all`, the value Tailscale's API reference gives both filters by default, filters nothing.
    const everyone = await logins('');
    expect(everyone.length).toBeGreaterThan(2);
    expect(await logins('type=all&role=all')).toEqual(everyone);
    expect(await logins('type=all&role=member')).toEqual(['ana@example.com', 'bo@example.com']);
  });
});

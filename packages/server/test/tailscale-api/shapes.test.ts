/**
 * What Tailscale's Go client demands of every answer's fields, checked on the raw JSON (the Go
 * client would hide some mistakes behind zero values): times are RFC 3339 or null, never "",
 * and to the second as Tailscale writes them;
 * `expirySeconds` is an integer or null; lists are arrays, never null. Keys of each kind (auth,
 * API, OAuth client, revoked), users and devices.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

/** As Tailscale writes times: UTC, to the second, no fraction (what `strptime(t, "%Y-%m-%dT%H:%M:%SZ")` reads). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/;

const timeOrNull = (value: unknown) => value === null || (typeof value === 'string' && RFC3339.test(value));

describe("/api/v2 answers' field shapes", () => {
  let server: TestServer;
  const get = async (path: string) => {
    const res = await fetch(`${server.url}/api/v2${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } });
    expect(res.status).toBe(200);
    return json(res);
  };

  beforeAll(async () => {
    server = await startServer();
    await enroll(server, (await createAuthKey(server)).key, { hostname: 'web' });
    const post = (body: unknown) =>
      fetch(`${server.url}/api/v2/tailnet/-/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const revoked = await json(await post({ capabilities: { devices: { create: { tags: null } } } }));
    await fetch(`${server.url}/api/v2/tailnet/-/keys/${revoked.id}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${server.apiKey}` },
    });
    expect((await post({ keyType: 'client', scopes: ['users:read'], tags: null })).status).toBe(200);
  });
  afterAll(() => server.close());

  it('answers keys of every kind with RFC 3339 or null times, integer expirySeconds and arrays', async () => {
    const { keys } = await get('/tailnet/-/keys?all=true');
    expect(new Set(keys.map((k: any) => k.keyType))).toEqual(new Set(['api', 'auth', 'client']));
    expect(keys.some((k: any) => k.invalid)).toBe(true);
    for (const key of keys) {
      for (const field of ['created', 'updated', 'expires', 'revoked']) {
        expect(timeOrNull(key[field]), `${key.keyType} ${field}: ${key[field]}`).toBe(true);
      }
      expect(key.expirySeconds === null || Number.isInteger(key.expirySeconds), `${key.keyType}`).toBe(true);
      if (key.keyType !== 'auth') expect(Array.isArray(key.scopes)).toBe(true);
      if (key.keyType !== 'api') expect(Array.isArray(key.tags)).toBe(true);
      if (key.keyType === 'auth') expect(Array.isArray(key.capabilities.devices.create.tags)).toBe(true);
    }
  });

  it('answers users and devices with RFC 3339 or null times and arrays', async () => {
    const { users } = await get('/tailnet/-/users');
    expect(users.length).toBeGreaterThan(0);
    for (const user of users) {
      expect(timeOrNull(user.created) && user.created !== null).toBe(true);
      expect(timeOrNull(user.lastSeen)).toBe(true);
    }
    const { devices } = await get('/tailnet/-/devices?fields=all');
    for (const device of devices) {
      // lastSeen only while not connected, as Tailscale sends it.
      for (const field of ['created', 'expires', ...(device.connectedToControl ? [] : ['lastSeen'])]) {
        expect(typeof device[field] === 'string' && RFC3339.test(device[field]), `${field}: ${device[field]}`).toBe(
          true,
        );
      }
      expect('lastSeen' in device).toBe(!device.connectedToControl);
      for (const field of ['addresses', 'tags', 'advertisedRoutes', 'enabledRoutes']) {
        expect(Array.isArray(device[field]), field).toBe(true);
      }
    }
  });

  it("answers every field of Tailscale's device record, the all-fields ones only with fields=all", async () => {
    const ALL_ONLY = ['advertisedRoutes', 'enabledRoutes', 'clientConnectivity', 'sshEnabled', 'postureIdentity'];
    const [listed] = (await get('/tailnet/-/devices')).devices;
    const [full] = (await get('/tailnet/-/devices?fields=all')).devices;
    expect(listed).toMatchObject({ multipleConnections: false, isExternal: false, blocksIncomingConnections: false });
    for (const field of ALL_ONLY) expect(listed, field).not.toHaveProperty(field);
    expect(full).toMatchObject({ multipleConnections: false, sshEnabled: false, postureIdentity: { disabled: true } });
    expect(Object.keys(full).sort()).toEqual([...Object.keys(listed), ...ALL_ONLY].sort());
  });
});

/**
 * Devices on /api/v2 as Tailscale's clients use them. `lastSeen` only while the device is not
 * connected, as Tailscale sends it. The list's filters: any top-level property
 * of the device, repeated values as alternatives (Go's `WithFilter(key, values)`, Terraform's
 * `filter { name, values }`), and a filter Warren cannot apply refused rather than ignored.
 * Changes: each answers 200 with an empty JSON object, and `keyExpiryDisabled` is optional on
 * `POST device/{id}/key` (absent or null leaves the key's expiry as it is).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, nodeCall } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('/api/v2 device changes', () => {
  let server: TestServer;
  let id: string;
  let token: string;
  const post = (path: string, body: unknown) => server.call('POST', `/api/v2/device/${path}`, { body });
  const device = async () => json(await server.call('GET', `/api/v2/device/${id}`));

  beforeAll(async () => {
    server = await startServer();
    const web = await enroll(server, (await createAuthKey(server)).key, { hostname: 'web' });
    id = web.device.id;
    token = web.nodeToken;
  });
  afterAll(() => server.close());

  it('filters the list on any property, taking repeated values as alternatives', async () => {
    const key = (await createAuthKey(server, { reusable: true })).key;
    await enroll(server, key, { hostname: 'db', os: 'windows', clientVersion: '1.80.2' });
    await enroll(server, key, { hostname: 'mac', os: 'macos', clientVersion: '1.80.2' });
    const hostnames = async (query: string) => {
      const res = await server.call('GET', `/api/v2/tailnet/-/devices?${query}`);
      const body = await json(res);
      expect(res.status, `${query}: ${JSON.stringify(body)}`).toBe(200);
      return body.devices.map((d: any) => d.hostname).sort();
    };
    expect(await hostnames('os=linux&os=windows')).toEqual(['db', 'web']);
    expect(await hostnames('os=linux,macos')).toEqual(['mac', 'web']);
    expect(await hostnames('hostname=db&hostname=mac&fields=all')).toEqual(['db', 'mac']);
    expect(await hostnames('clientVersion=1.80.2&os=macos')).toEqual(['mac']);
    // Tailscale's name is the MagicDNS name; Warren's own name is taken too.
    expect(await hostnames('name=db.test.warren.internal')).toEqual(['db']);
    expect(await hostnames('name=mac.test.warren.internal.&name=db')).toEqual(['db', 'mac']);
    expect(await hostnames('name=db.other.warren.internal')).toEqual([]);
    expect(await hostnames('user=owner%40example.com')).toEqual(['db', 'mac', 'web']);
    expect(await hostnames('user=nobody%40example.com')).toEqual([]);
    expect(await hostnames('authorized=true&isEphemeral=false')).toEqual(['db', 'mac', 'web']);
    expect(await hostnames('authorized=false')).toEqual([]);
    expect(await hostnames(`addresses=${encodeURIComponent('100.64.0.1')}`)).toEqual(['web']);
    for (const query of ['color=blue', 'clientConnectivity=x', 'authorized=yes']) {
      const res = await server.call('GET', `/api/v2/tailnet/-/devices?${query}`);
      expect(res.status, query).toBe(400);
      expect(await json(res)).toMatchObject({ status: 400, code: 'invalid_request' });
    }
  });

  it('answers each change with an empty JSON object', async () => {
    for (const [path, body] of [
      ['authorized', { authorized: true }],
      ['tags', { tags: null }],
      ['name', { name: 'web-2' }],
      ['key', { keyExpiryDisabled: true }],
    ] as const) {
      const res = await post(`${id}/${path}`, body);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(await res.text(), path).toBe('{}');
    }
    expect(await device()).toMatchObject({ name: 'web-2', keyExpiryDisabled: true });
  });

  it('leaves the key expiry as it is when keyExpiryDisabled is absent or null', async () => {
    expect((await post(`${id}/key`, { keyExpiryDisabled: true })).status).toBe(200);
    for (const body of [{}, { keyExpiryDisabled: null }]) {
      const res = await post(`${id}/key`, body);
      expect(res.status, JSON.stringify(body)).toBe(200);
      expect((await device()).keyExpiryDisabled).toBe(true);
    }
    expect((await post(`${id}/key`, { keyExpiryDisabled: false })).status).toBe(200);
    expect((await device()).keyExpiryDisabled).toBe(false);
    expect((await post('dev_nope/key', {})).status).toBe(404);
    expect((await post(`${id}/key`, { keyExpiryDisabled: 'yes' })).status).toBe(400);
  });

  it('shows lastSeen only while the device is not connected', async () => {
    const listed = async () =>
      (await json(await server.call('GET', '/api/v2/tailnet/-/devices?fields=all'))).devices.find(
        (d: any) => d.id === id,
      );
    for (const shown of [await device(), await listed()]) {
      expect(shown.connectedToControl).toBe(true);
      expect(shown).not.toHaveProperty('lastSeen');
    }
    const seen = new Date(server.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
    expect((await nodeCall(server, token, 'disconnect')).status).toBe(204);
    for (const shown of [await device(), await listed()]) {
      expect(shown).toMatchObject({ connectedToControl: false, lastSeen: seen });
    }
  });
});

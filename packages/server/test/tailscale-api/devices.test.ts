/**
 * Device changes on /api/v2 as Tailscale documents them: each answers 200 with an empty JSON
 * object, and `keyExpiryDisabled` is optional on `POST device/{id}/key` (absent or null leaves
 * the key's expiry as it is).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('/api/v2 device changes', () => {
  let server: TestServer;
  let id: string;
  const post = (path: string, body: unknown) => server.call('POST', `/api/v2/device/${path}`, { body });
  const device = async () => json(await server.call('GET', `/api/v2/device/${id}`));

  beforeAll(async () => {
    server = await startServer();
    id = (await enroll(server, (await createAuthKey(server)).key, { hostname: 'web' })).device.id;
  });
  afterAll(() => server.close());

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
});

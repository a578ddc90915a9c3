/**
 * Renaming a device through /api/v2 (`POST /device/{id}/name`): the rules the Go client's suite
 * does not reach — what is stored, what a later enrollment of the same hostname is called, the
 * audit entry, the netmap epoch — and every refusal changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries, createAuthKey, enroll, getDevice, netmapEpoch } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('POST /api/v2/device/{id}/name', () => {
  let server: TestServer;
  let authKey: string;

  const rename = (id: string, name: unknown) =>
    fetch(`${server.url}/api/v2/device/${id}/name`, {
      method: 'POST',
      headers: { authorization: `Bearer ${server.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });

  beforeAll(async () => {
    server = await startServer();
    authKey = (await createAuthKey(server, { reusable: true })).key;
  });
  afterAll(() => server.close());

  it('renames, moves the netmap epoch, audits, and leaves the old name to the next device', async () => {
    const web = await enroll(server, authKey, { hostname: 'web' });
    const epoch = await netmapEpoch(server);
    expect((await rename(web.device.id, 'Frontend')).status).toBe(200);
    expect((await getDevice(server, web.device.id)).body).toMatchObject({ name: 'frontend', hostname: 'web' });
    expect(await netmapEpoch(server)).toBeGreaterThan(epoch);
    expect((await auditEntries(server)).find((e) => e.action === 'device.rename')).toMatchObject({
      target: web.device.id,
      status: 200,
    });
    // The hostname's name is free again; the new one is a base of its own.
    expect((await enroll(server, authKey, { hostname: 'web' })).device.name).toBe('web');
    expect((await enroll(server, authKey, { hostname: 'frontend' })).device.name).toBe('frontend-1');

    // "" gives back a name made from the hostname: `web` is taken now, so `web-1`.
    expect((await rename(web.device.id, '')).status).toBe(200);
    expect((await getDevice(server, web.device.id)).body.name).toBe('web-1');
  });

  it('refuses a taken name, a non-label and a foreign domain, changing nothing', async () => {
    const db = await enroll(server, authKey, { hostname: 'db' });
    const before = await netmapEpoch(server);
    const refusals: [unknown, number, string][] = [
      ['web', 409, 'conflict'],
      ['two words', 400, 'invalid_request'],
      ['db.example.com', 400, 'invalid_request'],
      ['-db', 400, 'invalid_request'],
      ['x'.repeat(64), 400, 'invalid_request'],
      [42, 400, 'invalid_request'],
    ];
    for (const [name, status, code] of refusals) {
      const res = await rename(db.device.id, name);
      expect(await json(res), String(name)).toMatchObject({ status, code });
    }
    expect((await getDevice(server, db.device.id)).body.name).toBe('db');
    expect(await netmapEpoch(server)).toBe(before);
    const res = await rename('dev_nope', 'x');
    expect(res.status).toBe(404);
  });
});

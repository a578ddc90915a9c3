/**
 * `usage` in GET /v1/network is kept by triggers (migration 009), not counted per call: every
 * way a device or user comes or goes must move it, including a device removed with its user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthKey, enroll, startWithAuthKey } from '../devices/helpers.js';
import { json, type TestServer } from '../harness.js';

describe('network usage', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
  });
  afterAll(() => server.close());

  const usage = async () => (await json(await server.call('GET', '/v1/network'))).usage;
  const counted = async () => {
    const db = server.database.storage.db;
    const devices = await db.selectFrom('devices').select('id').where('network_id', '=', server.networkId).execute();
    const users = await db.selectFrom('users').select('id').where('network_id', '=', server.networkId).execute();
    return { users: users.length, devices: devices.length };
  };

  it('follows enrollment, deletion and users with their devices', async () => {
    expect(await usage()).toEqual({ users: 1, devices: 0 });
    const first = await enroll(server, authKey);
    await enroll(server, authKey);
    expect(await usage()).toEqual({ users: 1, devices: 2 });

    expect((await server.call('DELETE', `/v1/devices/${first.device.id}`)).status).toBe(204);
    expect(await usage()).toEqual({ users: 1, devices: 1 });

    const ana = await json(await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com' } }));
    const anaKey = (await createAuthKey(server, { user: ana.id })).key;
    await enroll(server, anaKey);
    expect(await usage()).toEqual({ users: 2, devices: 2 });

    // Removing a user removes their devices (a cascade the server does not write row by row).
    expect((await server.call('DELETE', `/v1/users/${ana.id}`)).status).toBe(204);
    expect(await usage()).toEqual({ users: 1, devices: 1 });
    expect(await usage()).toEqual(await counted());
  });

  it('counts only its own network', async () => {
    const other = await server.addNetwork();
    const theirs = await json(await server.call('GET', '/v1/network', { key: other.apiKey }));
    expect(theirs.usage).toEqual({ users: 1, devices: 0 });
    expect(await usage()).toEqual(await counted());
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { enroll } from '../node-enroll.js';

/** The user list reports each user's devices from the user's row, kept by triggers (migration 026). */
describe("users' device count and last sighting", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const listed = async (id: string) => {
    const { users } = await json(await server.call('GET', '/v1/users'));
    return users.find((user: { id: string }) => user.id === id) as { deviceCount: number; lastSeen: string | null };
  };
  const heartbeat = (nodeToken: string) =>
    fetch(`${server.url}/v1/node/heartbeat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${nodeToken}`, 'content-type': 'application/json' },
      body: '{}',
    }).then((res) => expect(res.status).toBe(200));

  it('follows enrollment, heartbeats to within a minute, and deletion', async () => {
    const user = await json(await server.call('POST', '/v1/users', { body: { loginName: 'kai@example.com' } }));
    expect(await listed(user.id)).toMatchObject({ deviceCount: 0, lastSeen: null });

    const enrolledAt = server.clock.now();
    const [laptop, phone] = await enroll(server, ['laptop', 'phone'], { user: 'kai@example.com' });
    expect(await listed(user.id)).toMatchObject({ deviceCount: 2, lastSeen: new Date(enrolledAt).toISOString() });

    // A heartbeat in a later minute than the device's last one moves the user's last sighting to it.
    server.clock.advance(61_000);
    await heartbeat(phone!.nodeToken);
    const beat = server.clock.now();
    expect((await listed(user.id)).lastSeen).toBe(new Date(beat).toISOString());

    // Within the minute the sighting may trail the newest heartbeat, never by a minute or more.
    server.clock.advance(20_000);
    await heartbeat(phone!.nodeToken);
    const seen = Date.parse((await listed(user.id)).lastSeen as string);
    expect(seen).toBeGreaterThanOrEqual(beat);
    expect(server.clock.now() - seen).toBeLessThan(60_000);

    // A deleted device no longer counts; the user was still seen when it was.
    expect((await server.call('DELETE', `/v1/devices/${laptop!.id}`)).status).toBe(204);
    expect(await listed(user.id)).toMatchObject({ deviceCount: 1, lastSeen: new Date(seen).toISOString() });
    expect((await server.call('DELETE', `/v1/devices/${phone!.id}`)).status).toBe(204);
    expect((await listed(user.id)).deviceCount).toBe(0);
  });

  it('counts only the devices of the network the user belongs to, each once', async () => {
    await server.call('POST', '/v1/users', { body: { loginName: 'lea@example.com' } });
    await enroll(server, ['lea-1', 'lea-2', 'lea-3'], { user: 'lea@example.com' });
    // The same login in another network, with a device of its own there.
    const other = await server.addNetwork();
    await server.call('POST', '/v1/users', { body: { loginName: 'lea@example.com' }, key: other.apiKey });
    await enroll({ url: server.url, apiKey: other.apiKey }, ['lea-elsewhere'], { user: 'lea@example.com' });
    const { users } = await json(await server.call('GET', '/v1/users'));
    const { devices } = await json(await server.call('GET', '/v1/devices'));
    for (const user of users as { id: string; deviceCount: number }[]) {
      const owned = (devices as { user: { id: string } | null }[]).filter((device) => device.user?.id === user.id);
      expect(user.deviceCount).toBe(owned.length);
    }
    expect(users.find((user: { loginName: string }) => user.loginName === 'lea@example.com').deviceCount).toBe(3);
  });
});

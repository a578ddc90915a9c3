import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type TestServer } from '../harness.js';
import {
  auditEntries,
  countDevices,
  createAuthKey,
  enroll,
  expectProblem,
  getDevice,
  heartbeat,
  listDevices,
  netmapEpoch,
  startWithAuthKey,
} from './helpers.js';

describe('device detail, delete and tags', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey({
      tags: ['tag:server', 'tag:db', 'tag:backup', 'tag:ok'],
      keyTags: ['tag:server'],
    }));
  });
  afterAll(() => server.close());

  it('returns the detail record, and 404 for unknown ids and other networks', async () => {
    const { device } = await enroll(server, authKey, { hostname: 'detail' });
    const found = await getDevice(server, device.id);
    expect(found.status).toBe(200);
    expect(found.body).toEqual(device);
    await expectProblem(await server.call('GET', '/v1/devices/dev_doesnotexist'), 404, 'not_found');
    const other = await server.addNetwork();
    const body = await expectProblem(
      await server.call('GET', `/v1/devices/${device.id}`, { key: other.apiKey }),
      404,
      'not_found',
    );
    expect(body.detail).toContain(device.id);
    await expectProblem(
      await server.call('DELETE', `/v1/devices/${device.id}`, { key: other.apiKey }),
      404,
      'not_found',
    );
    await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { key: other.apiKey, body: { tags: [] } }),
      404,
      'not_found',
    );
    expect((await getDevice(server, device.id)).body.tags).toEqual(['tag:server']);
  });

  it('deletes a device: credential refused at once, 404 afterwards, routes gone, audited', async () => {
    const { device, nodeToken } = await enroll(server, authKey, {
      hostname: 'doomed',
      advertiseRoutes: ['10.9.0.0/16'],
    });
    const epoch = await netmapEpoch(server);
    const res = await server.call('DELETE', `/v1/devices/${device.id}`);
    expect(res.status).toBe(204);
    // One bump per change: a second one would only make every device recompute twice as often.
    expect(await netmapEpoch(server)).toBe(epoch + 1);
    await expectProblem(
      await server.call('POST', '/v1/node/heartbeat', { key: nodeToken, body: {} }),
      401,
      'unauthenticated',
    );
    await expectProblem(await server.call('GET', `/v1/devices/${device.id}`), 404, 'not_found');
    await expectProblem(await server.call('DELETE', `/v1/devices/${device.id}`), 404, 'not_found');
    const routes = await json(await server.call('GET', '/v1/routes'));
    expect(routes.routes.filter((r: any) => r.deviceId === device.id)).toEqual([]);
    const tags = await server.database.storage.db
      .selectFrom('device_tags')
      .selectAll()
      .where('device_id', '=', device.id)
      .execute();
    expect(tags).toEqual([]);
    const entry = (await auditEntries(server)).find((e) => e.action === 'device.delete');
    expect(entry).toMatchObject({ target: device.id, status: 204, method: 'DELETE', keyName: 'initial' });
  });

  it('removes a user’s devices with the user and keeps the keys', async () => {
    const user = await json(await server.call('POST', '/v1/users', { body: { loginName: 'leaver@example.com' } }));
    const key = await createAuthKey(server, { reusable: true, user: user.id });
    const one = await enroll(server, key.key, { hostname: 'leaver-1' });
    await enroll(server, key.key, { hostname: 'leaver-2' });
    expect(await listDevices(server, `?user=${user.id}`)).toHaveLength(2);
    expect((await server.call('DELETE', `/v1/users/${user.id}`)).status).toBe(204);
    expect(await listDevices(server, '?user=leaver@example.com')).toEqual([]);
    expect((await heartbeat(server, one.nodeToken)).status).toBe(401);
    const stillThere = await json(await server.call('GET', `/v1/keys/${key.id}`));
    expect(stillThere.state).toBe('valid');
    // and the key still enrolls (to the owner now)
    expect((await enroll(server, key.key, { hostname: 'after' })).device.user.loginName).toBe('owner@example.com');
  });

  it('replaces, clears and validates tags', async () => {
    const { device } = await enroll(server, authKey, { hostname: 'tagged' });
    const epoch = await netmapEpoch(server);
    let res = await server.call('POST', `/v1/devices/${device.id}/tags`, {
      body: { tags: ['tag:db', 'tag:backup', 'tag:db'] },
    });
    expect(res.status).toBe(200);
    const updated = await json(res);
    expect(updated.tags).toEqual(['tag:backup', 'tag:db']);
    expect(updated.addresses).toEqual(device.addresses);
    expect(await netmapEpoch(server)).toBeGreaterThan(epoch);
    expect((await listDevices(server, '?tag=tag:backup')).map((d) => d.id)).toEqual([device.id]);
    expect((await listDevices(server, '?tag=tag:server')).map((d) => d.id)).not.toContain(device.id);

    await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: ['tag:ok', 'Bad Tag'] } }),
      400,
      'invalid_tag',
    );
    // However long: a tag over its bound is malformed like any other.
    for (const tags of [[`tag:${'a'.repeat(300)}`], ['tag:ok', 7]]) {
      const res = await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags } });
      await expectProblem(res, 400, 'invalid_tag');
    }
    await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: [], more: 1 } }),
      400,
      'unknown_field',
    );
    await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { body: {} }),
      400,
      'invalid_request',
    );
    // refused requests changed nothing
    expect((await getDevice(server, device.id)).body.tags).toEqual(['tag:backup', 'tag:db']);

    res = await server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags: [] } });
    expect((await json(res)).tags).toEqual([]);
    expect((await listDevices(server, '?tag=tag:db')).map((d) => d.id)).not.toContain(device.id);
    const entries = (await auditEntries(server)).filter((e) => e.action === 'device.tags' && e.target === device.id);
    expect(entries).toHaveLength(2);
  });

  it('emits device.updated only when the set of tags changes', async () => {
    const { device } = await enroll(server, authKey, { hostname: 'retagged' });
    const set = (tags: string[]) => server.call('POST', `/v1/devices/${device.id}/tags`, { body: { tags } });
    expect((await set(['tag:db', 'tag:ok'])).status).toBe(200);
    const epoch = await netmapEpoch(server);
    // The same set, in another order and with a repeat: a 200 that is no transition.
    const again = await set(['tag:ok', 'tag:db', 'tag:ok']);
    expect(again.status).toBe(200);
    expect((await json(again)).tags).toEqual(['tag:db', 'tag:ok']);
    expect(await netmapEpoch(server)).toBe(epoch);
    const events = await json(await server.call('GET', '/v1/events?type=device.updated&since=1h&limit=1000'));
    const updates = events.entries.filter((e: { data: { device: { id: string } } }) => e.data.device.id === device.id);
    expect(updates).toHaveLength(1);
  });

  it('requires the devices scope for changes; read may list', async () => {
    const { device } = await enroll(server, authKey, { hostname: 'scoped' });
    const create = await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'reader', scopes: ['read'] } });
    const reader = (await json(create)).key;
    expect((await server.call('GET', '/v1/devices', { key: reader })).status).toBe(200);
    expect((await server.call('GET', `/v1/devices/${device.id}`, { key: reader })).status).toBe(200);
    await expectProblem(
      await server.call('DELETE', `/v1/devices/${device.id}`, { key: reader }),
      403,
      'insufficient_scope',
    );
    await expectProblem(
      await server.call('POST', `/v1/devices/${device.id}/tags`, { key: reader, body: { tags: [] } }),
      403,
      'insufficient_scope',
    );
    const before = await countDevices(server);
    const devicesKey = (
      await json(await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'ops', scopes: ['devices'] } }))
    ).key;
    expect((await server.call('DELETE', `/v1/devices/${device.id}`, { key: devicesKey })).status).toBe(204);
    expect(await countDevices(server)).toBe(before - 1);
  });
});

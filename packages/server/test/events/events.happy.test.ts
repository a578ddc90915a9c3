/** GET /v1/events: what each change emits, its shape, type filters and tailing with cursors. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTags } from '../acl/helpers.js';
import { createAuthKey, enroll } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { eventPage, eventTypes } from './helpers.js';

describe('events', () => {
  let server: TestServer;
  let keyId: string;
  beforeAll(async () => {
    server = await startServer({ settings: { eventDetectorIntervalMs: 3_600_000 } });
    keyId = (await server.database.storage.db.selectFrom('keys').select('id').executeTakeFirstOrThrow()).id;
  });
  afterAll(() => server.close());

  it('records a user created, updated and deleted, with the actor and the record after the change', async () => {
    const start = (await eventPage(server)).nextCursor;
    const user = await json(await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com' } }));
    await server.call('PATCH', `/v1/users/${user.id}`, { body: { role: 'admin' } });
    expect((await server.call('DELETE', `/v1/users/${user.id}`)).status).toBe(204);
    const page = await eventPage(server, `?cursor=${start}`);
    expect(page.entries.map((e) => e.type)).toEqual(['user.created', 'user.updated', 'user.deleted']);
    const [created, updated] = page.entries;
    expect(created.id).toMatch(/^evt_/);
    expect(created.actor).toEqual({ type: 'key', id: keyId, name: 'initial' });
    expect(created.data.user).toMatchObject({ id: user.id, loginName: 'ana@example.com', role: 'member' });
    expect(updated.data.user.role).toBe('admin');
    expect(Date.parse(created.time)).toBeGreaterThan(0);
    // Tailing from the last cursor: nothing new, the same cursor back.
    const tail = await eventPage(server, `?cursor=${page.nextCursor}`);
    expect(tail).toEqual({ entries: [], nextCursor: page.nextCursor, hasMore: false });
  });

  it('emits nothing for a refused request', async () => {
    const before = await eventTypes(server);
    const bad = await server.call('POST', '/v1/users', { body: { loginName: 'not-an-email' } });
    expect(bad.status).toBe(400);
    const policy = await server.call('PUT', '/v1/acl', {
      raw: '{ "acls": [ }',
      headers: { 'content-type': 'application/json' },
    });
    expect(policy.status).toBe(400);
    expect(await eventTypes(server)).toEqual(before);
  });

  it('filters by type and by family, and refuses a malformed filter', async () => {
    await defineTags(server, ['tag:web']);
    const authKey = (await createAuthKey(server, { reusable: true })).key;
    const device = await enroll(server, authKey, { hostname: 'web-1' });
    const tagged = await server.call('POST', `/v1/devices/${device.device.id}/tags`, { body: { tags: ['tag:web'] } });
    expect(tagged.status).toBe(200);
    expect((await server.call('DELETE', `/v1/devices/${device.device.id}`)).status).toBe(204);
    const devices = await eventTypes(server, '?since=1d&type=device.*');
    expect(devices).toEqual(expect.arrayContaining(['device.updated', 'device.deleted']));
    expect(devices.every((t) => t.startsWith('device.'))).toBe(true);
    const exact = await eventPage(server, '?since=1d&type=device.deleted&type=user.created');
    expect(new Set(exact.entries.map((e) => e.type))).toEqual(new Set(['device.deleted', 'user.created']));
    const deleted = exact.entries.find((e) => e.type === 'device.deleted');
    expect(deleted.data.device).toMatchObject({ id: device.device.id, hostname: 'web-1', tags: ['tag:web'] });
    const bad = await server.call('GET', '/v1/events?type=device');
    expect(bad.status).toBe(400);
    expect((await json(bad)).code).toBe('invalid_request');
  });

  it.each(['', 'device.exploded', 'nothing.*', 'device.*&type=nothing.*'])(
    'refuses a filter that names no event type (%s), as a webhook does',
    async (filter) => {
      // Well formed, but it would match nothing, for ever: a typo, not an empty page.
      const res = await server.call('GET', `/v1/events?type=${filter}`);
      expect(res.status).toBe(400);
      const problem = await json(res);
      expect(problem.code).toBe('invalid_request');
      expect(problem.detail).toMatch(/is not an event type or family/);
      const webhook = await server.call('POST', '/v1/webhooks', {
        body: { url: 'https://hooks.example.com/x', events: filter.split('&type=') },
      });
      expect(webhook.status).toBe(400);
    },
  );

  it('pages with limit and hasMore, and keeps networks apart', async () => {
    const first = await eventPage(server, '?since=1d&limit=2');
    expect(first.entries).toHaveLength(2);
    expect(first.hasMore).toBe(true);
    const second = await eventPage(server, `?cursor=${first.nextCursor}&limit=2`);
    expect(second.entries[0].id).not.toBe(first.entries[1].id);
    const other = await server.addNetwork();
    expect((await eventPage(server, '?since=1d', other.apiKey)).entries).toEqual([]);
  });
});

/**
 * Full event pages are kept as bodies (modules/logs/kept-pages.ts): a kept page
 * must be the page a server that kept nothing reads, before and after retention removes some
 * of its events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteEventsBefore } from '../../src/core/events.js';
import { json, type SecondInstance, secondInstance, startServer, type TestServer } from '../harness.js';
import { eventPage } from './helpers.js';

describe('event pages', () => {
  let server: TestServer;
  let second: SecondInstance;
  beforeAll(async () => {
    server = await startServer({ settings: { apiRateLimit: 100_000 } });
    second = await secondInstance(server);
  });
  afterAll(async () => {
    await second.close();
    await server.close();
  });

  const addUsers = async (prefix: string, n: number) => {
    for (let i = 0; i < n; i++) {
      const res = await server.call('POST', '/v1/users', { body: { loginName: `${prefix}${i}@example.com` } });
      expect(res.status).toBe(201);
    }
  };
  const fresh = async (query: string) => json(await second.get(`/v1/events${query}`));
  const logins = (page: { entries: any[] }) => page.entries.map((e) => e.data.user.loginName);

  it('serves a full page again as read afresh, and drops the events retention removed', async () => {
    await addUsers('old', 3);
    server.clock.advance(10_000);
    const cutoff = server.clock.now();
    await addUsers('new', 3);
    const query = '?since=1h&limit=4&type=user.*';
    const first = await eventPage(server, query);
    expect(first.hasMore).toBe(true);
    expect(first.entries).toHaveLength(4);
    // Kept: later events leave it as it was, and it is the page another server reads.
    await addUsers('later', 2);
    expect(await eventPage(server, query)).toEqual(first);
    expect(await fresh(query)).toEqual(first);
    const next = await eventPage(server, `?cursor=${first.nextCursor}&limit=4&type=user.*`);
    const kept = await eventPage(server, `?cursor=${first.nextCursor}&limit=4&type=user.*`);
    expect(kept).toEqual(next);
    // A page from a cursor inside the older events: its key stays the same after retention.
    const one = await eventPage(server, '?since=1h&limit=1&type=user.*');
    const inside = `?cursor=${one.nextCursor}&limit=4&type=user.*`;
    const spanning = await eventPage(server, inside);
    expect(logins(spanning)).toEqual(['old1@example.com', 'old2@example.com', 'new0@example.com', 'new1@example.com']);
    expect(await eventPage(server, inside)).toEqual(spanning);

    // Retention removes the older events: a kept page that showed them is read again.
    await deleteEventsBefore(server.database.storage.db, server.networkId, cutoff);
    const after = await eventPage(server, query);
    expect(after).toEqual(await fresh(query));
    expect(logins(after).some((login: string) => login.startsWith('old'))).toBe(false);
    expect(after.entries.map((e) => e.id)).not.toEqual(first.entries.map((e) => e.id));
    const spanningAfter = await eventPage(server, inside);
    expect(logins(spanningAfter)).toEqual([
      'new0@example.com',
      'new1@example.com',
      'new2@example.com',
      'later0@example.com',
    ]);
    expect(spanningAfter).toEqual(await fresh(inside));
    // The cursor page after it had no removed event: still the same page.
    const nextAgain = await eventPage(server, `?cursor=${first.nextCursor}&limit=4&type=user.*`);
    expect(nextAgain).toEqual(await fresh(`?cursor=${first.nextCursor}&limit=4&type=user.*`));
  });
});

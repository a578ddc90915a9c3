/**
 * Kept log pages (modules/logs/kept-pages.ts) on either database: a full page is served from its
 * kept body, and is read again when an entry commits inside its range out of sequence order (a
 * writer holding a lower number open while higher ones commit) or retention removes one. What a
 * kept page shows must always be what a second instance, which kept nothing, reads.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteEventsBefore } from '../../src/core/events.js';
import { eventPages } from '../../src/modules/events/event-pages.js';
import { auditPages } from '../../src/modules/logs/audit-pages.js';
import { backend, json, type SecondInstance, secondInstance, startServer, type TestServer } from '../harness.js';

describe('kept log pages', () => {
  let server: TestServer;
  let second: SecondInstance;
  beforeAll(async () => {
    server = await startServer();
    second = await secondInstance(server);
  });
  afterAll(async () => {
    await second.close();
    await server.close();
  });

  const marked = (id: string) => server.call('GET', '/v1/network', { headers: { 'x-request-id': id } });
  const addUser = async (login: string) => {
    const res = await server.call('POST', '/v1/users', { body: { loginName: `${login}@example.com` } });
    expect(res.status).toBe(201);
  };
  const page = async (path: string) => {
    const res = await server.call('GET', path);
    expect(res.status).toBe(200);
    return json(res);
  };
  const fresh = async (path: string) => json(await second.get(path));

  /** A SQL session of its own on the test's database, as another writer would have. */
  const session = async () => {
    const { url, schema } = server.database;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`set search_path to ${schema}`);
    return client;
  };

  it('serves a full page from its body on both databases, and never a page that reaches the end', async () => {
    for (let i = 0; i < 4; i++) await marked(`kept-${i}`);
    await server.app.ctx.audit.settled();
    const read = auditPages(server.app.ctx);
    const request = { since: '1h', limit: 2 };
    const first = await read(server.networkId, request, JSON.stringify);
    expect(first.kept).toBe(false);
    const again = await read(server.networkId, request, JSON.stringify);
    expect(again.kept).toBe(true);
    expect(again.body.equals(first.body)).toBe(true);
    const all = await read(server.networkId, { since: '1h', limit: 1000 }, JSON.stringify);
    expect(JSON.parse(all.body.toString()).hasMore).toBe(false);
    expect((await read(server.networkId, { since: '1h', limit: 1000 }, JSON.stringify)).kept).toBe(false);
  });

  it.runIf(backend === 'postgres')(
    'shows an audit entry that commits after higher numbers were read, where its number puts it',
    async () => {
      const ctx = server.app.ctx;
      const late = await session();
      try {
        await late.query('begin');
        const { rows } = await late.query(
          `insert into audit_log (network_id, time, method, path, status, client_addr, request_id)
           values ($1, $2, 'GET', '/v1/network', 200, '127.0.0.1', 'late') returning seq`,
          [server.networkId, server.clock.now()],
        );
        const lateSeq = Number(rows[0].seq);
        // Higher numbers commit while the lower one is open.
        for (let i = 0; i < 4; i++) await marked(`higher-${i}`);
        await ctx.audit.settled();
        const path = `/v1/logs/audit?cursor=${ctx.logIds.cursor('audit', lateSeq - 1)}&limit=3`;
        const before = await page(path);
        expect(before.hasMore).toBe(true);
        expect(before.entries.map((e: any) => e.requestId)).toEqual(['higher-0', 'higher-1', 'higher-2']);
        const read = auditPages(ctx);
        const request = { cursor: ctx.logIds.cursor('audit', lateSeq - 1), limit: 3 };
        await read(server.networkId, request, JSON.stringify);
        expect((await read(server.networkId, request, JSON.stringify)).kept).toBe(true);
        expect(await page(path)).toEqual(before);

        await late.query('commit');
        const after = await page(path);
        expect(after.entries.map((e: any) => e.requestId)).toEqual(['late', 'higher-0', 'higher-1']);
        expect(after).toEqual(await fresh(path));
        expect((await read(server.networkId, request, JSON.stringify)).kept).toBe(false);
      } finally {
        await late.end();
      }
    },
  );

  it.runIf(backend === 'postgres')(
    "shows an event that commits after higher numbers were read, even as one of the page's goes",
    async () => {
      const ctx = server.app.ctx;
      const late = await session();
      try {
        await late.query('begin');
        const { rows } = await late.query(
          `insert into events (id, network_id, type, time, actor, data, webhook_id)
           values ('evt_late', $1, 'user.created', $2, '{"type":"system","id":null,"name":"late"}',
             '{"user":{"loginName":"late@example.com"}}', null) returning seq`,
          [server.networkId, server.clock.now()],
        );
        const lateSeq = Number(rows[0].seq);
        for (let i = 0; i < 4; i++) await addUser(`higher${i}`);
        const path = `/v1/events?cursor=${ctx.logIds.cursor('event', lateSeq - 1)}&limit=3&type=user.*`;
        const logins = (body: any) => body.entries.map((e: any) => e.data.user.loginName);
        const before = await page(path);
        expect(logins(before)).toEqual(['higher0@example.com', 'higher1@example.com', 'higher2@example.com']);
        const read = eventPages(ctx);
        const request = { cursor: ctx.logIds.cursor('event', lateSeq - 1), limit: 3, type: ['user.*'] };
        await read(server.networkId, request, JSON.stringify);
        expect((await read(server.networkId, request, JSON.stringify)).kept).toBe(true);
        expect(await page(path)).toEqual(before);

        // With the late event, one of the page's events goes (as retention would take it): the
        // range holds as many events as before, but not the same ones.
        await late.query(`delete from events where network_id = $1 and data like '%"higher2@example.com"%'`, [
          server.networkId,
        ]);
        await late.query('commit');
        const after = await page(path);
        expect(logins(after)).toEqual(['late@example.com', 'higher0@example.com', 'higher1@example.com']);
        expect(after).toEqual(await fresh(path));
      } finally {
        await late.end();
      }
    },
  );

  it('reads a kept event page again when retention removed one of its events, on both databases', async () => {
    await addUser('first');
    await addUser('gone');
    server.clock.advance(10_000);
    const cutoff = server.clock.now();
    for (let i = 0; i < 3; i++) await addUser(`stays${i}`);
    const ctx = server.app.ctx;
    const read = eventPages(ctx);
    const one = await page('/v1/events?since=1h&limit=1000&type=user.created');
    const gone = one.entries.findIndex((e: any) => e.data.user.loginName === 'gone@example.com');
    expect(gone).toBeGreaterThan(0);
    // A cursor right before the event retention will remove, as a client paging would hold.
    const cursorPage = await page(`/v1/events?since=1h&limit=${gone}&type=user.created`);
    const request = { cursor: cursorPage.nextCursor as string, limit: 2, type: ['user.created'] };
    const path = `/v1/events?cursor=${request.cursor}&limit=2&type=user.created`;
    const logins = (body: any) => body.entries.map((e: any) => e.data.user.loginName);
    expect(logins(await page(path))).toEqual(['gone@example.com', 'stays0@example.com']);
    await read(server.networkId, request, JSON.stringify);
    expect((await read(server.networkId, request, JSON.stringify)).kept).toBe(true);

    await deleteEventsBefore(ctx.db, server.networkId, cutoff);
    const after = await page(path);
    expect(logins(after)).toEqual(['stays0@example.com', 'stays1@example.com']);
    expect(after).toEqual(await fresh(path));
    expect((await read(server.networkId, request, JSON.stringify)).kept).toBe(false);
  });

  it('moves a `since` page on when its first entry leaves the window, though its body was kept', async () => {
    const ctx = server.app.ctx;
    // Entries before these were recorded at an earlier time.
    server.clock.advance(1_000);
    for (let i = 0; i < 3; i++) {
      await marked(`window-${i}`);
      server.clock.advance(1_000);
    }
    await ctx.audit.settled();
    const all = await page('/v1/logs/audit?since=24h&limit=1000');
    const firstOf = (body: any) => body.entries[0].requestId;
    const at = all.entries.findIndex((e: any) => e.requestId === 'window-0');
    // An hour after window-0 (minus the seconds since), so that `since=1h` starts there.
    const recorded = Date.parse(all.entries[at].time);
    server.clock.advance(recorded + 3_600_000 - server.clock.now());
    const read = auditPages(ctx);
    const request = { since: '1h', limit: 2 };
    await read(server.networkId, request, JSON.stringify);
    const kept = await read(server.networkId, request, JSON.stringify);
    expect(kept.kept).toBe(true);
    expect(firstOf(JSON.parse(kept.body.toString()))).toBe('window-0');
    // One millisecond later window-0 is older than an hour: the page starts at the next entry.
    server.clock.advance(1);
    const moved = await read(server.networkId, request, JSON.stringify);
    expect(firstOf(JSON.parse(moved.body.toString()))).toBe(all.entries[at + 1].requestId);
    expect(moved.kept).toBe(false);
    expect(await page('/v1/logs/audit?since=1h&limit=2')).toEqual(await fresh('/v1/logs/audit?since=1h&limit=2'));
  });
});

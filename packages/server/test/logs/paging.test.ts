import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LogIds } from '../../src/lib/log-ids.js';
import { decodeCursor, pagePosition } from '../../src/modules/logs/paging.js';
import { startServer, type TestServer } from '../harness.js';

describe('cursors', () => {
  const ids = new LogIds(randomBytes(32));
  it('round-trip and refuse anything else', () => {
    expect(decodeCursor(ids, 'audit', ids.cursor('audit', 0))).toBe(0);
    expect(decodeCursor(ids, 'audit', ids.cursor('audit', 123_456_789))).toBe(123_456_789);
    const forged = Buffer.from(ids.cursor('audit', 5), 'base64url');
    forged[3] = (forged[3] ?? 0) ^ 1;
    const bad = ['', 'x', `${ids.cursor('audit', 5)}=`, Buffer.from('{"v":1,"s":5}').toString('base64url')];
    bad.push(forged.toString('base64url'), ids.cursor('connection', 5), new LogIds(randomBytes(32)).cursor('audit', 5));
    for (const text of bad) expect(() => decodeCursor(ids, 'audit', text), text).toThrow(/cursor/);
  });
});

describe('audit log paging (shares the helpers)', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const audit = async (query: string) => {
    const response = await server.call('GET', `/v1/logs/audit?${query}`);
    expect(response.status).toBe(200);
    return (await response.json()) as { entries: any[]; nextCursor: string; hasMore: boolean };
  };

  it('pages every call once, in order, and tails with the cursor', async () => {
    const first = await audit('since=1h&limit=1000');
    for (let i = 0; i < 7; i++) await server.call('GET', `/v1/network?i=${i}`);
    const seen: any[] = [];
    let cursor = first.nextCursor;
    for (;;) {
      const page = await audit(`cursor=${cursor}&limit=2`);
      seen.push(...page.entries);
      cursor = page.nextCursor;
      if (!page.hasMore) break;
    }
    const network = seen.filter((e) => e.path === '/v1/network');
    expect(network).toHaveLength(7);
    const seqs = seen.map((e) => Number(server.app.ctx.logIds.idSeq('audit', e.id)));
    expect(seqs.every(Number.isSafeInteger)).toBe(true);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    // sorted alone would accept a page boundary that repeats an entry
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it('since selects on the time; an empty window gives a cursor at the end', async () => {
    server.clock.advance(2 * 3_600_000);
    const quiet = await audit('since=1m&key=key_none');
    expect(quiet.entries).toEqual([]);
    await server.call('GET', '/v1/network?after=quiet');
    const next = await audit(`cursor=${quiet.nextCursor}`);
    expect(next.entries.some((e) => e.path === '/v1/network')).toBe(true);
    expect(next.entries.every((e) => Date.parse(e.time) >= server.clock.now() - 60_000)).toBe(true);
  });

  it('since follows the clock with nothing committed between the calls', async () => {
    // The position `since` resolves to is kept across the clock on SQLite (paging.ts): it must
    // still move to the next entry the moment the bound passes the first one's time.
    server.clock.advance(2 * 3_600_000);
    const t1 = server.clock.now();
    await server.call('GET', '/v1/network?at=t1');
    server.clock.advance(10_000);
    const t2 = server.clock.now();
    await server.call('GET', '/v1/network?at=t2');
    await server.app.ctx.audit.settled();
    // The position at the call time whose `since=1m` bound is `bound`.
    const at = (bound: number) =>
      pagePosition(server.app.ctx, 'audit_log', server.networkId, { since: '1m' }, bound + 60_000);
    const before = await at(t1 - 1_000);
    expect(before.exhausted).toBe(false);
    expect(await at(t1)).toEqual(before);
    const past = await at(t1 + 1);
    expect(past.exhausted).toBe(false);
    expect(past.afterSeq).toBeGreaterThan(before.afterSeq);
    expect(await at(t2)).toEqual(past);
    const end = await at(t2 + 1);
    expect(end.exhausted).toBe(true);
    expect(end.afterSeq).toBeGreaterThanOrEqual(past.afterSeq + 1);
    // And back: an earlier bound than the kept answer's is read again, not served from it.
    expect(await at(t1 - 1_000)).toEqual(before);
  });
});

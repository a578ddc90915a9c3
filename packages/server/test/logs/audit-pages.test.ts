/**
 * Full audit pages are kept as bodies and need not wait for the audit writer
 * (modules/logs/kept-pages.ts): a page that reaches the log's end must still show every later
 * call, and a kept page must be the page a server that kept nothing reads.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, type SecondInstance, secondInstance, startServer, type TestServer } from '../harness.js';

describe('audit pages', () => {
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

  /** A call the audit log tells apart by its request id. */
  const marked = (id: string) => server.call('GET', '/v1/network', { headers: { 'x-request-id': id } });
  const ids = (entries: any[], prefix: string) =>
    entries.map((e) => e.requestId as string).filter((id) => id.startsWith(prefix));

  const page = async (query: string) => {
    const res = await server.call('GET', `/v1/logs/audit?${query}`);
    expect(res.status).toBe(200);
    return json(res);
  };

  it('shows calls made after a page that reached the end was read, at that same position', async () => {
    const start = await page('since=1h&limit=1000');
    expect(start.hasMore).toBe(false);
    const tail = await page(`cursor=${start.nextCursor}&limit=1000`);
    for (let i = 0; i < 3; i++) await marked(`after-${i}`);
    const again = await page(`cursor=${start.nextCursor}&limit=1000`);
    expect(again.entries.length).toBeGreaterThan(tail.entries.length);
    expect(ids(again.entries, 'after-')).toEqual(['after-0', 'after-1', 'after-2']);
  });

  it('serves a full page again as a server that kept nothing reads it, whatever came after', async () => {
    for (let i = 0; i < 6; i++) await marked(`fill-${i}`);
    await page('since=1h&limit=1000');
    const first = await page('since=1h&limit=3');
    expect(first.hasMore).toBe(true);
    const next = await page(`cursor=${first.nextCursor}&limit=3`);
    expect(next.hasMore).toBe(true);
    for (let i = 0; i < 4; i++) await marked(`later-${i}`);
    for (const [query, kept] of [
      ['since=1h&limit=3', first],
      [`cursor=${first.nextCursor}&limit=3`, next],
    ] as const) {
      expect(await page(query)).toEqual(kept);
      const fresh = await second.get(`/v1/logs/audit?${query}`);
      expect(await json(fresh)).toEqual(kept);
    }
    // The next page goes on where the kept one ends, with nothing skipped or repeated.
    const after = await page(`cursor=${next.nextCursor}&limit=1000`);
    const seen = [...first.entries, ...next.entries, ...after.entries].map((e: any) => e.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect(ids(after.entries, 'later-')).toEqual(['later-0', 'later-1', 'later-2', 'later-3']);
  });
});

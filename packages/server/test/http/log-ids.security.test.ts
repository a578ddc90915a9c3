/**
 * Log ids and cursors reveal nothing across networks: the sequence they stand for is shared
 * by every network, so handed out as a number it would tell one network how much the others
 * did between two of its own calls. They are encrypted; paging still sees every entry once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBase32 } from '../../src/lib/ids.js';
import { json, startServer, type TestServer } from '../harness.js';

const commonPrefix = (a: string, b: string) => {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i;
};
const asNumber = (id: string) => BigInt(`0x${fromBase32(id.slice(4))?.toString('hex')}`);

describe('opaque log ids and cursors', () => {
  let server: TestServer;
  let other: { networkId: string; apiKey: string };

  beforeAll(async () => {
    server = await startServer();
    other = await server.addNetwork();
  });
  afterAll(() => server.close());

  /** One audited call of network A, found again by its request id. */
  const markA = (requestId: string) => server.call('GET', '/v1/network', { headers: { 'x-request-id': requestId } });
  const busyB = async (calls: number) => {
    for (let i = 0; i < calls; i++) await server.call('GET', '/v1/users', { key: other.apiKey });
  };
  const auditA = async (query: string) => {
    const res = await server.call('GET', `/v1/logs/audit?${query}`);
    expect(res.status).toBe(200);
    return (await json(res)) as {
      entries: { id: string; requestId: string; time: string }[];
      nextCursor: string;
      hasMore: boolean;
    };
  };

  it('gives consecutive entries of a network ids unrelated to what other networks wrote between them', async () => {
    const gaps = [0, 1, 37];
    await markA('a-0');
    for (const [i, gap] of gaps.entries()) {
      await busyB(gap);
      await markA(`a-${i + 1}`);
    }
    const { entries } = await auditA('since=1h&limit=1000');
    const byRequest = new Map(entries.map((e) => [e.requestId, e.id]));
    const ids = ['a-0', ...gaps.map((_, i) => `a-${i + 1}`)].map((r) => byRequest.get(r) as string);
    for (const id of ids) expect(id).toMatch(/^aud_[0-9a-z]{26}$/);
    // The server knows how far apart they are (each call of B left an entry between them)…
    const seqs = ids.map((id) => server.app.ctx.logIds.idSeq('audit', id) as number);
    expect((seqs[3] as number) - (seqs[0] as number)).toBeGreaterThanOrEqual(38);
    for (const [i, gap] of gaps.entries()) {
      const [before, after] = [ids[i] as string, ids[i + 1] as string];
      // …the ids do not: no shared prefix beyond chance, no difference that counts B's calls.
      expect(commonPrefix(before, after) - 4, `${before} ${after}`).toBeLessThan(4);
      const difference = asNumber(after) - asNumber(before);
      expect(difference === BigInt(gap + 1) || difference === -BigInt(gap + 1)).toBe(false);
    }
  });

  it('hands out cursors that are not a readable position', async () => {
    const first = await auditA('since=1h&limit=1');
    await busyB(5);
    const second = await auditA('since=1h&limit=2');
    for (const cursor of [first.nextCursor, second.nextCursor]) {
      expect(cursor).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(() => JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))).toThrow();
    }
    expect(commonPrefix(first.nextCursor, second.nextCursor)).toBeLessThan(4);
    // Altered in its last two characters: always to something else (a cursor may end in "AA").
    const tail = first.nextCursor.endsWith('AA') ? 'QA' : 'AA';
    const forged = await server.call('GET', `/v1/logs/audit?cursor=${first.nextCursor.slice(0, -2)}${tail}`);
    expect(forged.status).toBe(400);
    expect((await json(forged)).code).toBe('invalid_request');
  });

  it('pages every entry once, in order of time, while other networks write', async () => {
    const start = (await auditA('since=1s')).nextCursor;
    const written: string[] = [];
    for (let i = 0; i < 23; i++) {
      written.push(`p-${i}`);
      await markA(`p-${i}`);
      await busyB(i % 3);
    }
    const seen: { id: string; requestId: string; time: string }[] = [];
    let cursor = start;
    // Reading the log writes to it too, so the tail never ends: read up to the last mark.
    while (!seen.some((e) => e.requestId === 'p-22')) {
      const page = await auditA(`cursor=${cursor}&limit=4`);
      expect(page.entries.length).toBeGreaterThan(0);
      seen.push(...page.entries);
      cursor = page.nextCursor;
    }
    const marks = seen.filter((e) => e.requestId.startsWith('p-')).map((e) => e.requestId);
    expect(marks).toEqual(written);
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    const times = seen.map((e) => e.time);
    expect([...times].sort()).toEqual(times);
  });
});

import { type Enrolled, enroll, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConnectionEntryBody, Warren } from '../src/index.js';
import { startWithClient } from './fixture.js';

function report(server: TestServer, device: Enrolled, count: number, port = 443) {
  const start = new Date(server.clock.now() - 5000).toISOString();
  const end = new Date(server.clock.now()).toISOString();
  const entries = Array.from({ length: count }, (_, i) => ({
    start,
    end,
    proto: 'tcp',
    src: { addr: `100.64.0.1:${40000 + i}` },
    dst: { addr: `100.64.0.2:${port}` },
    txBytes: 100 + i,
    rxBytes: 200,
    txPackets: 1,
    rxPackets: 2,
  }));
  return server.call('POST', '/v1/node/connections', { key: device.nodeToken, body: { entries } });
}

describe('Warren client: connection log paging', () => {
  let server: TestServer;
  let warren: Warren;
  let a: Enrolled;
  let b: Enrolled;
  beforeAll(async () => {
    ({ server, warren } = await startWithClient());
    [a, b] = (await enroll(server, ['a', 'b'])) as [Enrolled, Enrolled];
    expect((await report(server, a, 7)).status).toBe(202);
  });
  afterAll(() => server.close());

  it('returns one typed page with a cursor', async () => {
    const page = await warren.logs.connections({ since: '1h', limit: 5 });
    expect(page.entries).toHaveLength(5);
    expect(page.hasMore).toBe(true);
    expect(page.entries[0]).toMatchObject({ proto: 'tcp', src: { deviceId: a.id }, dst: { deviceId: b.id } });
    expect(page.entries[0]!.id).toMatch(/^log_/);
    const rest = await warren.logs.connections({ cursor: page.nextCursor, limit: 5 });
    expect(rest.entries).toHaveLength(2);
    expect(rest.hasMore).toBe(false);
  });

  it('connectionsAll walks every page, and its return value resumes the tail', async () => {
    const seen: string[] = [];
    const iterator = warren.logs.connectionsAll({ since: '1h', limit: 2 });
    let step = await iterator.next();
    while (!step.done) {
      seen.push(step.value.id);
      step = await iterator.next();
    }
    expect(seen).toHaveLength(7);
    expect(new Set(seen).size).toBe(7);

    expect((await report(server, a, 3, 22)).status).toBe(202);
    const more = [];
    for await (const entry of warren.logs.connectionsAll({ cursor: step.value })) more.push(entry);
    expect(more.map((e) => e.dst.addr)).toEqual(['100.64.0.2:22', '100.64.0.2:22', '100.64.0.2:22']);
  });

  it('connectionsAll with follow tails the log: what arrives later comes next, an abort ends it', async () => {
    const stop = new AbortController();
    const tail = warren.logs.connectionsAll({ since: '1h' }, { follow: true, pollIntervalMs: 10, signal: stop.signal });
    const already = (await warren.logs.connections({ since: '1h', limit: 1000 })).entries.length;
    for (let i = 0; i < already; i++) expect((await tail.next()).done).toBe(false);
    const waiting = tail.next(); // past the last page: polls until something arrives
    expect((await report(server, a, 1, 8080)).status).toBe(202);
    const arrived = await waiting;
    expect(arrived.done).toBe(false);
    expect((arrived.value as ConnectionEntryBody).dst.addr).toBe('100.64.0.2:8080');
    const ending = tail.next();
    stop.abort();
    const end = await ending;
    expect(end.done).toBe(true);
    const rest = await warren.logs.connections({ cursor: end.value as string });
    expect(rest.entries).toEqual([]); // the cursor it ends on is right after what it yielded
  });

  it('filters by device and rejects a bad duration', async () => {
    const page = await warren.logs.connections({ device: b.id, limit: 1000 });
    expect(page.entries.length).toBeGreaterThanOrEqual(3);
    await expect(warren.logs.connections({ since: '1w' })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_duration',
    });
  });
});

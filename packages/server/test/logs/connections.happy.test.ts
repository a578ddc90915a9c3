import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../harness.js';
import { addDevice, entry, page, type Reported, readAll, report, type TestDevice } from './helpers.js';

describe('connection log: report and page', () => {
  let server: TestServer;
  let devices: TestDevice[];

  beforeAll(async () => {
    server = await startServer();
    devices = [];
    for (let i = 0; i < 6; i++) devices.push(await addDevice(server));
  });
  afterAll(() => server.close());

  it('stores a batch and answers 202 with the count', async () => {
    const [a, b] = devices as [TestDevice, TestDevice];
    const response = await report(server, a, [entry(a, b), entry(a, b, { proto: 'udp' })]);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ accepted: 2 });
  });

  it('presents entries as the contract says, resolving both ends', async () => {
    const [a, b] = devices as [TestDevice, TestDevice];
    const before = (await page(server, { since: '1h', limit: 1000 })).nextCursor;
    const sent = entry(a, b, {
      start: '2026-11-22T10:00:00Z',
      end: '2026-11-22T10:00:07.250Z',
      src: { addr: `${a.ipv4}:51234` },
      dst: { addr: `${b.ipv4}:443` },
      txBytes: 1200,
      rxBytes: 56000,
      txPackets: 10,
      rxPackets: 40,
    });
    expect((await report(server, a, [sent])).status).toBe(202);
    const { entries } = await page(server, { cursor: before });
    expect(entries).toHaveLength(1);
    expect(entries[0]).toEqual({
      id: expect.stringMatching(/^log_[0-9a-z]{26}$/),
      start: '2026-11-22T10:00:00Z',
      end: '2026-11-22T10:00:07.250Z',
      proto: 'tcp',
      src: { deviceId: a.id, deviceName: a.name, addr: `${a.ipv4}:51234` },
      dst: { deviceId: b.id, deviceName: b.name, addr: `${b.ipv4}:443` },
      txBytes: 1200,
      rxBytes: 56000,
      txPackets: 10,
      rxPackets: 40,
      reportedBy: a.id,
      logged: new Date(server.clock.now()).toISOString().replace('.000Z', 'Z'),
    });
  });

  it('resolves IPv6 destinations, leaves subnet destinations null, and canonicalises addresses', async () => {
    const [a, b, c] = devices as [TestDevice, TestDevice, TestDevice];
    const before = (await page(server, { since: '1h', limit: 1000 })).nextCursor;
    const upper = `[${c.ipv6.toUpperCase().replace('::', ':0:0:0:0:')}]:22`;
    const batch = [
      entry(a, `[${b.ipv6}]:443`, { src: { addr: `[${a.ipv6}]:50000` } }),
      entry(a, '10.0.0.5:5432'),
      entry(a, upper, { src: { deviceId: a.id, addr: `[${a.ipv6}]:50001` } }),
      entry(a, '100.64.250.250:80'), // inside the range, but no device has that address
      entry(a, `${b.ipv4}:0`, { proto: 'icmp', src: { addr: `${a.ipv4}:0` } }),
    ];
    expect((await report(server, a, batch)).status).toBe(202);
    const { entries } = await page(server, { cursor: before });
    expect(entries.map((e) => e.dst.deviceId)).toEqual([b.id, null, c.id, null, b.id]);
    expect(entries.map((e) => e.dst.deviceName)).toEqual([b.name, null, c.name, null, b.name]);
    expect(entries.map((e) => e.src.deviceId)).toEqual([a.id, a.id, a.id, a.id, a.id]);
    expect(entries[2].dst.addr).toBe(`[${c.ipv6}]:22`);
    expect(entries[4].proto).toBe('icmp');
  });

  it('pages with small limits through many devices: nothing lost, nothing twice, in order', async () => {
    const start = (await page(server, { since: '1h', limit: 1000 })).nextCursor;
    const sent: Reported[] = [];
    for (let round = 0; round < 5; round++) {
      for (const [i, from] of devices.entries()) {
        const to = devices[(i + round + 1) % devices.length] as TestDevice;
        const batch = Array.from({ length: 3 + ((i * 7 + round) % 11) }, () => entry(from, to));
        expect((await report(server, from, batch)).status).toBe(202);
        sent.push(...batch);
      }
    }
    for (const limit of [1, 7, 50]) {
      const { entries, pages } = await readAll(server, { cursor: start, limit });
      expect(entries.map((e) => e.txBytes)).toEqual(sent.map((e) => e.txBytes));
      expect(new Set(entries.map((e) => e.id)).size).toBe(sent.length);
      expect(pages).toBe(Math.ceil(sent.length / limit)); // hasMore is exact: no empty last page
      const seqs = entries.map((e) => Number(server.app.ctx.logIds.idSeq('connection', e.id)));
      expect(seqs.every(Number.isSafeInteger)).toBe(true);
      expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    }
  });

  it('filters by device: what it sent and what it received, once each', async () => {
    const d = await addDevice(server);
    const e = await addDevice(server);
    const start = (await page(server, { since: '1h', limit: 1000 })).nextCursor;
    const [a] = devices as [TestDevice];
    const batches: [TestDevice, Reported[]][] = [
      [d, [entry(d, a), entry(d, e)]],
      [a, [entry(a, d), entry(a, a)]],
      [e, [entry(e, d), entry(e, a)]],
      [d, [entry(d, d)]], // to itself: one entry, not two
    ];
    for (const [from, batch] of batches) expect((await report(server, from, batch)).status).toBe(202);
    const expected = batches
      .flatMap(([, batch]) => batch)
      .filter((x) => x.src.addr.startsWith(`${d.ipv4}:`) || x.dst.addr.startsWith(`${d.ipv4}:`))
      .map((x) => x.txBytes);
    for (const limit of [1, 2, 100]) {
      const { entries } = await readAll(server, { cursor: start, device: d.id, limit });
      expect(entries.map((x) => x.txBytes)).toEqual(expected);
    }
    const since = await readAll(server, { since: '1h', device: e.id, limit: 2 });
    expect(since.entries.map((x) => x.txBytes)).toEqual([batches[0]![1][1]!, ...batches[2]![1]].map((x) => x.txBytes));
    const none = await page(server, { since: '1h', device: 'dev_doesnotexist' });
    expect(none).toMatchObject({ entries: [], hasMore: false });
    // By name, as people know devices: the same entries as by id; an unknown name selects none.
    const byName = await readAll(server, { cursor: start, device: d.name.toUpperCase(), limit: 2 });
    expect(byName.entries.map((x) => x.txBytes)).toEqual(expected);
    expect(await page(server, { since: '1h', device: 'no-such-device' })).toMatchObject({
      entries: [],
      hasMore: false,
    });
  });

  it('keeps the order of entries within a batch', async () => {
    const [a, b] = devices as [TestDevice, TestDevice];
    const start = (await page(server, { since: '1h', limit: 1000 })).nextCursor;
    const batch = Array.from({ length: 1000 }, (_, i) => entry(a, b, { txBytes: 1_000_000 + i }));
    expect((await report(server, a, batch)).status).toBe(202);
    const { entries } = await readAll(server, { cursor: start, limit: 1000 });
    expect(entries.map((x) => x.txBytes)).toEqual(batch.map((x) => x.txBytes));
  });

  it('nextCursor is a resume token: it stays put on an empty page and returns only newer entries', async () => {
    const [a, b] = devices as [TestDevice, TestDevice];
    const end = await readAll(server, { since: '1h', limit: 1000 });
    const empty = await page(server, { cursor: end.cursor });
    expect(empty).toEqual({ entries: [], nextCursor: end.cursor, hasMore: false });
    const fresh = [entry(a, b), entry(a, b)];
    await report(server, a, fresh);
    const next = await page(server, { cursor: end.cursor });
    expect(next.entries.map((x) => x.txBytes)).toEqual(fresh.map((x) => x.txBytes));
    expect(next.hasMore).toBe(false);
    expect((await page(server, { cursor: next.nextCursor })).entries).toEqual([]);
  });

  it('since selects on the time Warren logged an entry; an empty since page still gives a resume token', async () => {
    const [a, b] = devices as [TestDevice, TestDevice];
    server.clock.advance(3 * 3_600_000);
    const quiet = await page(server, {}); // default since=1h: nothing in the last hour
    expect(quiet.entries).toEqual([]);
    const early = [entry(a, b)];
    await report(server, a, early);
    server.clock.advance(2 * 3_600_000);
    const late = [entry(a, b), entry(a, b)];
    await report(server, a, late);
    expect((await readAll(server, {})).entries.map((x) => x.txBytes)).toEqual(late.map((x) => x.txBytes));
    expect((await readAll(server, { since: '3h' })).entries.map((x) => x.txBytes)).toEqual(
      [...early, ...late].map((x) => x.txBytes),
    );
    expect((await readAll(server, { cursor: quiet.nextCursor })).entries.map((x) => x.txBytes)).toEqual(
      [...early, ...late].map((x) => x.txBytes),
    );
  });

  it('never skips an entry reported late: pages follow arrival, not the connection start', async () => {
    const [a, b] = devices as [TestDevice, TestDevice];
    const tail = await readAll(server, { since: '1h' });
    const now = server.clock.now();
    const old = entry(a, b, {
      start: new Date(now - 3 * 86_400_000).toISOString(),
      end: new Date(now - 3 * 86_400_000 + 1000).toISOString(),
    });
    await report(server, a, [old]);
    const next = await page(server, { cursor: tail.cursor });
    expect(next.entries.map((x) => x.txBytes)).toEqual([old.txBytes]);
    expect((await readAll(server, { since: '1m' })).entries.map((x) => x.txBytes)).toContain(old.txBytes);
  });

  it('a tailer following cursors while several devices keep reporting sees every entry once, in order', async () => {
    const start = (await readAll(server, { since: '1h', limit: 1000 })).cursor;
    const writers = devices.slice(0, 4);
    const sent = new Map<number, Reported[]>();
    let writing = true;
    const writer = async (from: TestDevice, w: number) => {
      const mine: Reported[] = [];
      sent.set(w, mine);
      for (let i = 0; i < 25; i++) {
        const batch = Array.from({ length: 1 + ((i * 13 + w) % 40) }, () => entry(from, devices[5] as TestDevice));
        const response = await report(server, from, batch);
        expect(response.status).toBe(202);
        mine.push(...batch);
      }
    };
    const seen: any[] = [];
    const tailer = async () => {
      let cursor = start;
      for (;;) {
        const done = !writing;
        const current = await page(server, { cursor, limit: 13 });
        seen.push(...current.entries);
        cursor = current.nextCursor;
        if (done && !current.hasMore) return;
      }
    };
    const tailing = tailer();
    await Promise.all(writers.map((from, w) => writer(from, w)));
    writing = false;
    await tailing;
    const total = [...sent.values()].reduce((n, list) => n + list.length, 0);
    expect(seen).toHaveLength(total);
    expect(new Set(seen.map((x) => x.id)).size).toBe(total);
    const seqs = seen.map((x) => Number(server.app.ctx.logIds.idSeq('connection', x.id)));
    expect(seqs.every(Number.isSafeInteger)).toBe(true);
    expect([...seqs].sort((x, y) => x - y)).toEqual(seqs);
    for (const [w, mine] of sent) {
      const from = writers[w] as TestDevice;
      const theirs = seen.filter((x) => x.reportedBy === from.id).map((x) => x.txBytes);
      expect(theirs).toEqual(mine.map((x) => x.txBytes));
    }
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectionsAfter,
  INSERT_CHUNK,
  insertConnections,
  type NewConnectionRow,
} from '../../src/modules/logs/connections.repository.js';
import { appendConnections } from '../../src/modules/logs/connections.service.js';
import { freshDatabase, type TestDatabase } from '../harness.js';

const row = (i: number, overrides: Partial<NewConnectionRow> = {}): NewConnectionRow => ({
  network_id: 'net_repo',
  logged_at: 1_795_000_000_000,
  start_at: 1_794_999_000_000 + i,
  end_at: 1_794_999_000_500 + i,
  proto: i % 2 ? 'udp' : 'tcp',
  src_device_id: 'dev_a',
  src_addr: `100.64.0.1:${40000 + i}`,
  dst_device_id: i % 3 ? 'dev_b' : null,
  dst_addr: `100.64.0.2:${i}`,
  tx_bytes: i * 1000,
  rx_bytes: 2 ** 40 + i,
  tx_packets: i,
  rx_packets: i + 1,
  reported_by: 'dev_a',
  ...overrides,
});

describe('connection log repository', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterAll(() => database.drop());

  const readBack = async (after: number) => {
    const rows = await connectionsAfter(database.storage.db, 'net_repo', after, 10_000);
    return rows.map(({ seq: _seq, ...rest }) => ({
      ...rest,
      logged_at: Number(rest.logged_at),
      start_at: Number(rest.start_at),
      end_at: Number(rest.end_at),
      tx_bytes: Number(rest.tx_bytes),
      rx_bytes: Number(rest.rx_bytes),
      tx_packets: Number(rest.tx_packets),
      rx_packets: Number(rest.rx_packets),
    }));
  };

  const end = async () => {
    const rows = await connectionsAfter(database.storage.db, 'net_repo', 0, 1_000_000);
    return rows.length ? Number(rows[rows.length - 1]!.seq) : 0;
  };

  it('stores one report across several statements, every value intact and in order', async () => {
    const before = await end();
    const rows = Array.from({ length: INSERT_CHUNK * 2 + 7 }, (_, i) => row(i));
    await database.storage.db.transaction().execute((trx) => insertConnections(trx, rows));
    expect(await readBack(before)).toEqual(rows);
  });

  it('stores rows of different reports in one call too', async () => {
    const before = await end();
    const rows = Array.from({ length: 30 }, (_, i) =>
      row(i, { reported_by: `dev_${i % 3}`, src_device_id: `dev_${i % 3}`, logged_at: 1_795_000_000_000 + (i % 2) }),
    );
    await database.storage.db.transaction().execute((trx) => insertConnections(trx, rows));
    expect(await readBack(before)).toEqual(rows);
  });

  it('appends reports arriving together in order, each whole, logged times never going back', async () => {
    const before = await end();
    const t = 1_795_000_100_000;
    // Four reports at once: the first is written alone, the others together after it. The
    // third comes from a clock a second behind: it is logged at the time before it.
    const reports = [
      { device: 'dev_r1', now: t, size: 3 },
      { device: 'dev_r2', now: t + 5, size: INSERT_CHUNK + 2 },
      { device: 'dev_r3', now: t - 1_000, size: 2 },
      { device: 'dev_r4', now: t + 9, size: 1 },
    ].map(({ device, now, size }) => ({
      now,
      rows: Array.from({ length: size }, (_, i) => row(i, { reported_by: device, src_device_id: device })),
    }));
    await Promise.all(reports.map(({ rows, now }) => appendConnections(database.storage.db, 'net_repo', rows, now)));
    const stored = await readBack(before);
    expect(stored.map((r) => r.reported_by)).toEqual(reports.flatMap(({ rows }) => rows.map((r) => r.reported_by)));
    expect(stored.map((r) => r.start_at)).toEqual(reports.flatMap(({ rows }) => rows.map((r) => r.start_at)));
    const logged = [t, t + 5, t + 5, t + 9];
    expect(stored.map((r) => r.logged_at)).toEqual(reports.flatMap(({ rows }, i) => rows.map(() => logged[i])));
  });
});

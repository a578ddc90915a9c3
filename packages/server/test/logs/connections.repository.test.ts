import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectionsAfter,
  INSERT_CHUNK,
  insertConnections,
  type NewConnectionRow,
} from '../../src/modules/logs/connections.repository.js';
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
});

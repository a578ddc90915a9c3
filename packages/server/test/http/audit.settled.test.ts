/**
 * A log reader waits for the entries of calls answered before it (`settled()`); readers that
 * arrive together share one write instead of queueing one small transaction each.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuditRow, insertAuditEntries } from '../../src/core/audit-entries.js';
import { AuditLog } from '../../src/http/audit.js';
import type { Db } from '../../src/storage/database.js';
import { freshDatabase, type TestDatabase } from '../harness.js';

let database: TestDatabase;
beforeAll(async () => {
  database = await freshDatabase();
});
afterAll(() => database.drop());

function row(i: number): AuditRow {
  return {
    time: Date.now(),
    method: 'GET',
    path: `/v1/reads/${i}`,
    status: 200,
    client_addr: '127.0.0.1',
    request_id: `req_settled_${i}`,
    network_id: null,
    key_id: null,
    key_name: null,
    user_id: null,
    user_login: null,
    device_id: null,
    action: null,
    target: null,
  };
}

/** The database, counting the transactions begun through it. */
function counting(db: Db): { db: Db; transactions: () => number } {
  let transactions = 0;
  const proxy = new Proxy(db, {
    get(target, property, receiver) {
      if (property === 'transaction') transactions++;
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: proxy, transactions: () => transactions };
}

describe('AuditLog.settled', () => {
  it('lets 32 readers arriving together share one write, and each sees every earlier entry', async () => {
    const { db, transactions } = counting(database.storage.db);
    const audit = new AuditLog(db);
    const waits: Promise<void>[] = [];
    for (let i = 0; i < 32; i++) {
      audit.enqueue(row(i));
      waits.push(audit.settled());
    }
    await Promise.all(waits);
    const written = await database.storage.db
      .selectFrom('audit_log')
      .select('path')
      .where('request_id', 'like', 'req_settled_%')
      .execute();
    expect(written).toHaveLength(32);
    expect(transactions()).toBe(1);
    await audit.close();
  });

  it('waits for a write in flight, and writes what arrived during it in the next one', async () => {
    const audit = new AuditLog(database.storage.db);
    audit.enqueue(row(100));
    const first = audit.flush();
    audit.enqueue(row(101));
    await audit.settled();
    await first;
    const ids = await database.storage.db
      .selectFrom('audit_log')
      .select('request_id')
      .where('request_id', 'in', ['req_settled_100', 'req_settled_101'])
      .execute();
    expect(ids).toHaveLength(2);
    await audit.close();
  });
});

describe('AuditLog.recordNetwork', () => {
  it("writes a network's entries still waiting, in the queue or in a batch not yet begun, before its change", async () => {
    const audit = new AuditLog(database.storage.db);
    const ofNetwork = (i: number): AuditRow => ({ ...row(i), network_id: 'net_record' });
    audit.enqueue(ofNetwork(200));
    void audit.flush(); // this batch waits: no write has begun yet
    audit.enqueue(row(201)); // another network's (none), left to its batch
    audit.enqueue(ofNetwork(202));
    void audit.flush(); // and this one waits behind it
    audit.enqueue(ofNetwork(203));
    await audit.recordNetwork('net_record');
    await database.storage.db.transaction().execute((trx) => insertAuditEntries(trx, [ofNetwork(204)]));
    await audit.settled();
    const ids = await database.storage.db
      .selectFrom('audit_log')
      .select('request_id')
      .where(
        'request_id',
        'in',
        [200, 201, 202, 203, 204].map((i) => `req_settled_${i}`),
      )
      .orderBy('seq')
      .execute();
    const order = ids.map((r) => r.request_id);
    // The network's calls before its change, in the order they were made; the other's anywhere.
    expect(order.filter((id) => id !== 'req_settled_201')).toEqual([200, 202, 203, 204].map((i) => `req_settled_${i}`));
    expect(order).toContain('req_settled_201');
    await audit.close();
  });
});

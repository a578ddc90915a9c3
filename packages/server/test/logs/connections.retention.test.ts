import { afterEach, describe, expect, it } from 'vitest';
import { sweepConnectionLog } from '../../src/modules/logs/connections.retention.js';
import { logRetentionDays } from '../../src/modules/network/plans.js';
import { startServer, type TestServer } from '../harness.js';
import { addDevice, entry, report, type TestDevice } from './helpers.js';

const DAY = 86_400_000;

describe('connection log retention', () => {
  let server: TestServer;
  afterEach(() => server.close());

  // Counted in the database: the clock moves past the API keys' 90-day lifetime here.
  const count = async (networkId = server.networkId) => {
    const row = await server.database.storage.db
      .selectFrom('connections')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('network_id', '=', networkId)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  };
  const batch = (from: TestDevice, to: TestDevice, n: number) => Array.from({ length: n }, () => entry(from, to));

  it('deletes only entries older than each network’s plan keeps them', async () => {
    server = await startServer({ plan: 'premium' });
    const free = await server.addNetwork('free');
    const [p1, p2] = [await addDevice(server), await addDevice(server)];
    const [f1, f2] = [await addDevice(server, free.networkId), await addDevice(server, free.networkId)];
    await report(server, p1, batch(p1, p2, 12));
    await report(server, f1, batch(f1, f2, 12));
    server.clock.advance(6 * DAY);
    await report(server, p1, batch(p1, p2, 3));
    await report(server, f1, batch(f1, f2, 3));
    server.clock.advance(2 * DAY); // the first batches are 8 days old, the second 2
    const sweep = () =>
      sweepConnectionLog(server.database.storage.db, server.clock.now(), {
        settings: server.app.ctx.settings,
        batch: 5,
      });
    expect(await sweep()).toBe(12);
    expect(await count()).toBe(15);
    expect(await count(free.networkId)).toBe(3);
    expect(await sweep()).toBe(0);
    server.clock.advance(83 * DAY); // 91 and 85 days
    expect(await sweep()).toBe(12 + 3);
    expect(await count()).toBe(3);
    expect(await count(free.networkId)).toBe(0);
  });

  it('keeps what was logged recently even if the connection itself is old', async () => {
    server = await startServer({ plan: 'free' });
    const [d1, d2] = [await addDevice(server), await addDevice(server)];
    const old = new Date(server.clock.now() - 30 * DAY).toISOString();
    await report(server, d1, [entry(d1, d2, { start: old, end: old })]);
    expect(await sweepConnectionLog(server.database.storage.db, server.clock.now())).toBe(0);
    expect(await count()).toBe(1);
  });

  it('takes the premium retention from the settings, and sweeps on its own in the background', async () => {
    server = await startServer({ settings: { premiumLogRetentionDays: 30, connectionRetentionIntervalMs: 25 } });
    expect(logRetentionDays('premium', server.app.ctx.settings)).toBe(30);
    expect(logRetentionDays('free', server.app.ctx.settings)).toBe(7);
    const [d1, d2] = [await addDevice(server), await addDevice(server)];
    await report(server, d1, batch(d1, d2, 4));
    server.clock.advance(29 * DAY);
    await report(server, d1, batch(d1, d2, 2));
    server.clock.advance(2 * DAY);
    await expect.poll(() => count(), { timeout: 5000, interval: 50 }).toBe(2);
  });
});

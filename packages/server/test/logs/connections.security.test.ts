import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../harness.js';
import { addDevice, entry, page, readAll, report, type TestDevice } from './helpers.js';

describe('connection log: one network never sees another', () => {
  let server: TestServer;
  let other: { networkId: string; apiKey: string };
  let a1: TestDevice;
  let a2: TestDevice;
  let b1: TestDevice;
  let b2: TestDevice;

  beforeAll(async () => {
    server = await startServer();
    other = await server.addNetwork();
    a1 = await addDevice(server);
    a2 = await addDevice(server);
    b1 = await addDevice(server, other.networkId);
    b2 = await addDevice(server, other.networkId);
  });
  afterAll(() => server.close());

  it('resolves destinations inside the reporter’s network only', async () => {
    // Both networks hand out the same addresses; b1 → a2's address is b2 in network B.
    expect(b2.ipv4).toBe(a2.ipv4);
    expect((await report(server, a1, [entry(a1, a2)])).status).toBe(202);
    expect((await report(server, b1, [entry(b1, a2.ipv4.concat(':443'))])).status).toBe(202);
    const mine = await readAll(server, { since: '1h' });
    const theirs = await readAll(server, { since: '1h' }, other.apiKey);
    expect(mine.entries.map((x) => [x.src.deviceId, x.dst.deviceId])).toEqual([[a1.id, a2.id]]);
    expect(theirs.entries.map((x) => [x.src.deviceId, x.dst.deviceId])).toEqual([[b1.id, b2.id]]);
  });

  it('a key sees only its own network, whatever the filter or cursor', async () => {
    for (let i = 0; i < 5; i++) await report(server, b1, [entry(b1, b2), entry(b1, b2)]);
    const mine = await readAll(server, { since: '1h' });
    expect(mine.entries.length).toBeGreaterThan(0);
    expect(mine.entries.every((x) => x.reportedBy === a1.id)).toBe(true);
    expect((await page(server, { since: '1h', device: b1.id })).entries).toEqual([]);
    // A cursor handed to the other network is only a position: it reveals nothing of theirs.
    const theirCursor = (await page(server, { since: '1h', limit: 1 }, other.apiKey)).nextCursor;
    const fromThere = await readAll(server, { cursor: theirCursor });
    expect(fromThere.entries.every((x) => x.reportedBy === a1.id)).toBe(true);
  });

  it('a device cannot report for another network’s device', async () => {
    const response = await report(server, b1, [entry(b1, a2, { src: { deviceId: a1.id, addr: `${a1.ipv4}:1` } })]);
    expect(response.status).toBe(400);
    expect((await readAll(server, { since: '1h' })).entries).toHaveLength(1);
  });

  it('a deleted device’s credential reports nothing', async () => {
    const gone = await addDevice(server);
    await server.database.storage.db.deleteFrom('devices').where('id', '=', gone.id).execute();
    const response = await report(server, gone, [entry(gone, a1)]);
    expect(response.status).toBe(401);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { addDevice, apiKey, entry, page, readAll, report, type TestDevice } from './helpers.js';

describe('connection log: refused reports and queries', () => {
  let server: TestServer;
  let a: TestDevice;
  let b: TestDevice;

  beforeAll(async () => {
    server = await startServer();
    a = await addDevice(server);
    b = await addDevice(server);
  });
  afterAll(() => server.close());

  const stored = async () => (await readAll(server, { since: '1d', limit: 1000 })).entries.length;

  async function refused(entries: unknown[], index: number, detail?: RegExp, code = 'invalid_request') {
    const before = await stored();
    const response = await report(server, a, entries);
    const body = await json(response);
    expect(response.status, JSON.stringify(body)).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(body).toMatchObject({ status: 400, code, index });
    expect(body.detail).toContain(`entries[${index}]`);
    if (detail) expect(body.detail).toMatch(detail);
    expect(await stored()).toBe(before);
    return body;
  }

  const good = () => Array.from({ length: 5 }, () => entry(a, b));
  const withBad = (index: number, bad: unknown) => {
    const list: unknown[] = good();
    list.splice(index, 0, bad);
    return list;
  };

  it('stores nothing of a batch with one bad entry, and names the first bad one', async () => {
    await refused(withBad(3, entry(a, b, { end: '2026-11-22T09:00:00Z', start: '2026-11-22T10:00:00Z' })), 3, /end/);
    await refused(withBad(0, entry(a, b, { start: '22/11/2026' })), 0, /start/);
    await refused(withBad(2, entry(a, b, { proto: 'sctp' })), 2, /proto/);
    await refused(withBad(4, entry(a, b, { dst: { addr: '100.64.0.9' } })), 4, /dst\.addr/);
    await refused(withBad(1, entry(a, b, { src: { addr: '[fd7a:115c:a1e0::1]:70000' } })), 1, /src\.addr/);
    await refused(withBad(1, entry(a, b, { dst: { addr: `${b.ipv4}:0` } })), 1, /port 0/);
    const twoBad = withBad(2, entry(a, b, { proto: 'x' }));
    twoBad.splice(4, 0, entry(a, b, { proto: 'y' }));
    await refused(twoBad, 2, /"x"/);
  });

  it('refuses an entry that claims another device as its source', async () => {
    const body = await refused(withBad(2, entry(a, b, { src: { deviceId: b.id, addr: `${b.ipv4}:1234` } })), 2);
    expect(body.detail).toContain(b.id);
  });

  it('names the entry of schema errors too: types, negatives, unknown fields', async () => {
    await refused(withBad(3, { ...entry(a, b), txBytes: -1 }), 3, /txBytes/);
    await refused(withBad(1, { ...entry(a, b), rxPackets: 1.5 }), 1, /rxPackets/);
    await refused(withBad(2, { ...entry(a, b), rxBytes: '12' }), 2, /rxBytes/);
    await refused(withBad(0, { ...entry(a, b), colour: 'red' }), 0, /colour/, 'unknown_field');
    const { proto: _proto, ...missing } = entry(a, b);
    await refused(withBad(4, missing), 4, /proto/);
  });

  it('refuses bodies that are not a batch', async () => {
    const tooMany = Array.from({ length: 1001 }, () => entry(a, b));
    const response = await report(server, a, tooMany);
    expect(response.status).toBe(400);
    const body = await json(response);
    expect(body).toMatchObject({ code: 'invalid_request' });
    expect(body.index).toBeUndefined();
    const odd = await server.call('POST', '/v1/node/connections', { key: a.token, body: { entries: [], x: 1 } });
    expect(odd.status).toBe(400);
    expect((await json(odd)).code).toBe('unknown_field');
    const empty = await report(server, a, []);
    expect(empty.status).toBe(202);
    expect(await json(empty)).toEqual({ accepted: 0 });
  });

  it('needs a node credential to report, and an API key to read', async () => {
    const noKey = await server.call('POST', '/v1/node/connections', { key: null, body: { entries: [] } });
    expect(noKey.status).toBe(401);
    const apiKeyInstead = await server.call('POST', '/v1/node/connections', { body: { entries: [] } });
    expect(apiKeyInstead.status).toBe(401);
    const nodeKeyInstead = await server.call('GET', '/v1/logs/connections', { key: a.token });
    expect(nodeKeyInstead.status).toBe(401);
  });

  it('reading needs scope read or devices', async () => {
    expect((await server.call('GET', '/v1/logs/connections', { key: await apiKey(server, ['keys']) })).status).toBe(
      403,
    );
    await page(server, {}, await apiKey(server, ['read']));
    await page(server, {}, await apiKey(server, ['devices']));
  });

  it('answers 400 for a bad cursor, limit, since or device', async () => {
    const cursor = (await page(server, { limit: 1 })).nextCursor;
    const cases: [string, string][] = [
      ['cursor=nope', 'invalid_request'],
      ['cursor=eyJ2IjoyLCJzIjoxfQ', 'invalid_request'], // a well-formed token of an unknown version
      [`cursor=${cursor}AA`, 'invalid_request'],
      ['cursor=', 'invalid_request'],
      ['limit=0', 'invalid_request'],
      ['limit=1001', 'invalid_request'],
      ['limit=ten', 'invalid_request'],
      ['since=1w', 'invalid_duration'],
      ['since=-1h', 'invalid_duration'],
      ['since=', 'invalid_duration'],
      [`since=1h&cursor=${cursor}`, 'invalid_request'],
      ['device=web_1', 'invalid_request'],
      ['device=-web', 'invalid_request'],
    ];
    for (const [query, code] of cases) {
      const response = await server.call('GET', `/v1/logs/connections?${query}`);
      expect(response.status, query).toBe(400);
      expect((await json(response)).code, query).toBe(code);
    }
  });
});

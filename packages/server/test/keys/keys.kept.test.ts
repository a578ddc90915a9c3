/**
 * Key lists and keys presented once per kept answer (lib/kept.ts), not per call: what they show
 * must still follow the clock. Between the reads below nothing commits, so only the time a kept
 * value says it holds until can make it change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isKept } from '../../src/lib/kept.js';
import { presentKeptKey, presentKeyList } from '../../src/modules/keys/keys.presenter.js';
import { findKey, listKeys } from '../../src/modules/keys/keys.repository.js';
import { backend, json, startServer, type TestServer } from '../harness.js';

describe('kept key lists follow the clock', () => {
  let server: TestServer;
  let short: { id: string; expires: string };
  beforeAll(async () => {
    server = await startServer();
    short = await json(await server.call('POST', '/v1/keys', { body: { description: 'short', expiresIn: '90s' } }));
    await json(await server.call('POST', '/v1/keys', { body: { description: 'long', expiresIn: '1d' } }));
    // The calls' audit entries and key uses are written in a batch: let it commit first.
    await server.app.ctx.audit.settled();
  });
  afterAll(() => server.close());

  const db = () => server.database.storage.db;

  it('drops a key from the valid list the moment it expires, within the same kept answer', async () => {
    const expires = Date.parse(short.expires);
    const ids = async (state: 'valid' | 'expired', now: number) =>
      (await listKeys(db(), server.networkId, now, { state })).map((row) => row.id);
    // The same minute's calls share one query and its kept rows on SQLite.
    const minute = expires - (expires % 60_000);
    const before = Math.max(minute, expires - 1_000);
    expect(await ids('valid', before)).toContain(short.id);
    expect(await ids('expired', before)).not.toContain(short.id);
    if (backend === 'sqlite') {
      const first = await listKeys(db(), server.networkId, before, { state: 'valid' });
      expect(await listKeys(db(), server.networkId, before, { state: 'valid' })).toBe(first);
      expect(isKept(first)).toBe(true);
    }
    expect(await ids('valid', expires)).not.toContain(short.id);
    expect(await ids('expired', expires)).toContain(short.id);
    expect(await ids('valid', expires + 59_000)).not.toContain(short.id);
    expect(await ids('expired', expires + 61_000)).toContain(short.id);
  });

  it('shows a listed key as expired the moment it expires, and keeps the body otherwise', async () => {
    const expires = Date.parse(short.expires);
    const rows = await listKeys(db(), server.networkId, expires - 10, {});
    const stateAt = (now: number) => presentKeyList([rows], now).keys.find((key) => key.id === short.id)?.state;
    expect(stateAt(expires - 10)).toBe('valid');
    if (backend === 'sqlite') expect(presentKeyList([rows], expires - 5)).toBe(presentKeyList([rows], expires - 10));
    expect(stateAt(expires - 1)).toBe('valid');
    expect(stateAt(expires)).toBe('expired');
    const row = (await findKey(db(), server.networkId, short.id))!;
    expect(presentKeptKey([row], expires - 1).state).toBe('valid');
    expect(presentKeptKey([row], expires).state).toBe('expired');
  });

  it('answers the API with the key expired once the clock passes its expiry', async () => {
    const state = async () =>
      (await json(await server.call('GET', '/v1/keys'))).keys.find((key: { id: string }) => key.id === short.id).state;
    const one = async () => (await json(await server.call('GET', `/v1/keys/${short.id}`))).state;
    const tailscale = async () =>
      (await json(await server.call('GET', '/api/v2/tailnet/-/keys'))).keys.map((key: { id: string }) => key.id);
    expect(await state()).toBe('valid');
    expect(await one()).toBe('valid');
    expect(await tailscale()).toContain(short.id);
    server.clock.ms = Date.parse(short.expires);
    expect(await state()).toBe('expired');
    expect(await one()).toBe('expired');
    expect(await tailscale()).not.toContain(short.id);
  });
});

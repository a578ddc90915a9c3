/**
 * Login expiry: the network's nodeKeyExpiry, the sweep that expires due devices once, forced
 * expiry through /v1, keyExpiryDisabled, and logging in again.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { detectTransitions } from '../../src/modules/events/events.worker.js';
import { eventTypes } from '../events/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { netmap, peerNames } from '../netmap/helpers.js';
import { createAuthKey, type EnrolledDevice, enroll, expectProblem, getDevice, newNodeKey } from './helpers.js';

const HOUR = 3_600_000;

describe('device login expiry', () => {
  let server: TestServer;
  let key: string;
  let a: EnrolledDevice;
  let b: EnrolledDevice;
  const bKey = newNodeKey();

  beforeEach(async () => {
    server = await startServer();
    await server.call('PATCH', '/v1/network', { body: { nodeKeyExpiry: '2h' } });
    key = (await createAuthKey(server, { reusable: true })).key;
    a = await enroll(server, key, { hostname: 'a' });
    b = await enroll(server, key, { hostname: 'b', nodeKey: bKey });
  });
  afterEach(async () => server.close());

  const sweep = () => detectTransitions({ db: server.database.storage.db, clock: server.clock });
  const heartbeatBoth = async () => {
    for (const d of [a, b]) await server.call('POST', '/v1/node/heartbeat', { key: d.nodeToken, body: {} });
  };

  it('expires a login after nodeKeyExpiry: out of netmaps, announced once, back after logging in', async () => {
    expect(Date.parse(b.device.keyExpiry) - Date.parse(b.device.created)).toBe(2 * HOUR);
    expect(await peerNames(server, a)).toEqual(['b']);

    server.clock.advance(2 * HOUR + 1000);
    await heartbeatBoth();
    // The device itself is cut off by the clock; its peers when the sweep stores the expiry.
    expect(await peerNames(server, b)).toEqual([]);
    await sweep();
    await sweep();
    expect(await peerNames(server, a)).toEqual([]);
    expect((await getDevice(server, b.device.id)).body).toMatchObject({ keyExpired: true });
    expect(await eventTypes(server, '?since=1d&type=device.key_expired')).toEqual([
      'device.key_expired',
      'device.key_expired',
    ]);

    const again = await enroll(server, key, { hostname: 'b', nodeKey: bKey });
    expect(again.device).toMatchObject({ id: b.device.id, keyExpired: false });
    expect(Date.parse(again.device.keyExpiry)).toBe(server.clock.now() + 2 * HOUR);
    expect(await peerNames(server, again)).toEqual([]);
    const fresh = await enroll(server, key, { hostname: 'c' });
    expect(await peerNames(server, fresh)).toEqual(['b']);
  });

  it('never expires a device with keyExpiryDisabled, nor any device under nodeKeyExpiry 0', async () => {
    const res = await server.call('PATCH', `/v1/devices/${b.device.id}`, { body: { keyExpiryDisabled: true } });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ keyExpiryDisabled: true, keyExpiry: null });
    await server.call('PATCH', '/v1/network', { body: { nodeKeyExpiry: '0' } });
    const c = await enroll(server, key, { hostname: 'c' });
    expect(c.device.keyExpiry).toBeNull();

    server.clock.advance(30 * 24 * HOUR);
    await heartbeatBoth();
    await server.call('POST', '/v1/node/heartbeat', { key: c.nodeToken, body: {} });
    await sweep();
    expect(await peerNames(server, b)).toEqual(['c']);
    expect((await getDevice(server, a.device.id)).body.keyExpired).toBe(true);
    expect(await eventTypes(server, '?since=100d&type=device.updated')).toEqual(['device.updated']);
  });

  it('expires a login at once through POST /v1/devices/{id}/expire; disabling expiry lifts it', async () => {
    const version = (await netmap(server, a.nodeToken)).body.version;
    const res = await server.call('POST', `/v1/devices/${b.device.id}/expire`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.keyExpired).toBe(true);
    expect(Date.parse(body.keyExpiry)).toBe(server.clock.now());
    expect(await peerNames(server, a)).toEqual([]);
    expect((await netmap(server, a.nodeToken)).body.version).toBeGreaterThan(version);
    expect(await peerNames(server, b)).toEqual([]);

    // Expiring it again changes nothing and announces nothing.
    expect((await server.call('POST', `/v1/devices/${b.device.id}/expire`)).status).toBe(200);
    expect(await eventTypes(server, '?since=1d&type=device.key_expired')).toEqual(['device.key_expired']);

    await server.call('PATCH', `/v1/devices/${b.device.id}`, { body: { keyExpiryDisabled: true } });
    expect(await peerNames(server, a)).toEqual(['b']);
    expect((await getDevice(server, b.device.id)).body).toMatchObject({ keyExpired: false, keyExpiryDisabled: true });
  });

  it('refuses unknown devices, unknown fields and narrower keys', async () => {
    await expectProblem(await server.call('POST', '/v1/devices/dev_nope/expire'), 404, 'not_found');
    await expectProblem(
      await server.call('PATCH', '/v1/devices/dev_nope', { body: { keyExpiryDisabled: true } }),
      404,
      'not_found',
    );
    await expectProblem(
      await server.call('PATCH', `/v1/devices/${b.device.id}`, { body: { name: 'x' } }),
      400,
      'unknown_field',
    );
    await expectProblem(
      await server.call('PATCH', `/v1/devices/${b.device.id}`, { body: { keyExpiryDisabled: 'no' } }),
      400,
      'invalid_request',
    );
    const read = await json(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'r', scopes: ['read'] } }),
    );
    await expectProblem(
      await server.call('POST', `/v1/devices/${b.device.id}/expire`, { key: read.key }),
      403,
      'insufficient_scope',
    );
    await expectProblem(
      await server.call('PATCH', `/v1/devices/${b.device.id}`, { key: read.key, body: { keyExpiryDisabled: true } }),
      403,
      'insufficient_scope',
    );
    await expectProblem(
      await server.call('POST', `/v1/devices/${b.device.id}/expire`, { key: null }),
      401,
      'unauthenticated',
    );
    expect((await getDevice(server, b.device.id)).body).toMatchObject({ keyExpired: false, keyExpiryDisabled: false });
  });
});

/**
 * Device approval: the network setting, pending devices outside every netmap, approval through
 * /v1 letting them in, pre-approved auth keys, and every refusal of the approve call.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { eventTypes } from '../events/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { netmap, peerNames } from '../netmap/helpers.js';
import { auditEntries, createAuthKey, enroll, expectProblem, getDevice, listDevices, newNodeKey } from './helpers.js';

async function patchNetwork(server: TestServer, body: unknown, key?: string | null) {
  return server.call('PATCH', '/v1/network', { body, key });
}

async function apiKey(server: TestServer, scopes: string[]): Promise<string> {
  const res = await server.call('POST', '/v1/keys', { body: { type: 'api', name: scopes.join('+'), scopes } });
  expect(res.status).toBe(201);
  return (await json(res)).key;
}

describe('network settings', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startServer();
  });
  afterEach(async () => server.close());

  it('shows the defaults, changes them with PATCH and keeps what is left out', async () => {
    const before = await json(await server.call('GET', '/v1/network'));
    expect(before).toMatchObject({ deviceApproval: false, nodeKeyExpiry: '180d' });

    const res = await patchNetwork(server, { deviceApproval: true });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ deviceApproval: true, nodeKeyExpiry: '180d', id: server.networkId });
    const never = await json(await patchNetwork(server, { nodeKeyExpiry: '0' }));
    expect(never).toMatchObject({ deviceApproval: true, nodeKeyExpiry: '0' });
    expect(await json(await server.call('GET', '/v1/network'))).toMatchObject({
      deviceApproval: true,
      nodeKeyExpiry: '0',
    });
    const entry = (await auditEntries(server)).find((e) => e.action === 'network.update');
    expect(entry).toMatchObject({ method: 'PATCH', path: '/v1/network', status: 200, target: server.networkId });
  });

  it('refuses bad values, unknown fields, narrower keys and no key, changing nothing', async () => {
    await expectProblem(await patchNetwork(server, { nodeKeyExpiry: '6 months' }), 400, 'invalid_duration');
    await expectProblem(await patchNetwork(server, { nodeKeyExpiry: '400d' }), 400, 'invalid_duration');
    await expectProblem(await patchNetwork(server, { nodeKeyExpiry: '0s' }), 400, 'invalid_duration');
    await expectProblem(await patchNetwork(server, { deviceApproval: 'yes' }), 400, 'invalid_request');
    await expectProblem(await patchNetwork(server, { approval: true }), 400, 'unknown_field');
    const devices = await apiKey(server, ['devices', 'read']);
    const narrow = await expectProblem(
      await patchNetwork(server, { deviceApproval: true }, devices),
      403,
      'insufficient_scope',
    );
    expect(narrow).toMatchObject({ scope: 'all', detail: 'this call needs an API key with scope "all"' });
    await expectProblem(await patchNetwork(server, { deviceApproval: true }, null), 401, 'unauthenticated');
    expect(await json(await server.call('GET', '/v1/network'))).toMatchObject({
      deviceApproval: false,
      nodeKeyExpiry: '180d',
    });
  });
});

describe('device approval', () => {
  let server: TestServer;
  beforeEach(async () => {
    server = await startServer();
  });
  afterEach(async () => server.close());

  it('keeps a new device out of every netmap until it is approved', async () => {
    const key = await createAuthKey(server, { reusable: true });
    const early = await enroll(server, key.key, { hostname: 'early' });
    expect(early.device.authorized).toBe(true);
    expect((await patchNetwork(server, { deviceApproval: true })).status).toBe(200);

    const nodeKey = newNodeKey();
    const waiting = await enroll(server, key.key, { hostname: 'waiting', nodeKey });
    expect(waiting.device.authorized).toBe(false);
    expect(await peerNames(server, waiting)).toEqual([]);
    expect(await peerNames(server, early)).toEqual([]);
    expect((await netmap(server, waiting.nodeToken)).body.self).toMatchObject({ name: 'waiting', authorized: false });
    expect((await listDevices(server)).map((d) => [d.name, d.authorized]).sort()).toEqual([
      ['early', true],
      ['waiting', false],
    ]);
    expect(await eventTypes(server, '?since=1d&type=device.*')).toEqual([
      'device.created',
      'device.created',
      'device.pending',
    ]);

    const before = (await netmap(server, early.nodeToken)).body.version;
    const res = await server.call('POST', `/v1/devices/${waiting.device.id}/approve`);
    const approved = await json(res);
    expect(res.status, JSON.stringify(approved)).toBe(200);
    expect(approved).toMatchObject({ id: waiting.device.id, authorized: true });
    expect(await peerNames(server, waiting)).toEqual(['early']);
    expect(await peerNames(server, early)).toEqual(['waiting']);
    expect((await netmap(server, early.nodeToken)).body.version).toBeGreaterThan(before);
    expect((await eventTypes(server, '?since=1d&type=device.approved')).length).toBe(1);
    expect((await auditEntries(server)).find((e) => e.action === 'device.approve')).toMatchObject({
      path: `/v1/devices/${waiting.device.id}/approve`,
      status: 200,
      target: waiting.device.id,
    });

    // Logging in again keeps the approval.
    const again = await enroll(server, key.key, { hostname: 'waiting', nodeKey });
    expect(again.device).toMatchObject({ id: waiting.device.id, authorized: true });
    expect(await peerNames(server, again)).toEqual(['early']);
  });

  it('lets devices of a pre-approved auth key in at once; only auth keys take the flag', async () => {
    await patchNetwork(server, { deviceApproval: true });
    const res = await server.call('POST', '/v1/keys', { body: { type: 'auth', preApproved: true, reusable: true } });
    const key = await json(res);
    expect(key).toMatchObject({ type: 'auth', preApproved: true });
    const a = await enroll(server, key.key, { hostname: 'a' });
    const b = await enroll(server, key.key, { hostname: 'b' });
    expect([a.device.authorized, b.device.authorized]).toEqual([true, true]);
    expect(await peerNames(server, a)).toEqual(['b']);
    expect(await eventTypes(server, '?since=1d&type=device.pending')).toEqual([]);
    const plain = await json(await server.call('POST', '/v1/keys', { body: { type: 'auth' } }));
    expect(plain.preApproved).toBe(false);
    await expectProblem(
      await server.call('POST', '/v1/keys', { body: { type: 'api', name: 'x', scopes: ['read'], preApproved: true } }),
      400,
      'unknown_field',
    );
  });

  it('answers 409 for an approved device, 404 for an unknown or foreign one, 403 and 401 without the scope', async () => {
    await patchNetwork(server, { deviceApproval: true });
    const key = await createAuthKey(server);
    const waiting = await enroll(server, key.key, { hostname: 'waiting' });
    const path = `/v1/devices/${waiting.device.id}/approve`;
    const read = await apiKey(server, ['read']);
    await expectProblem(await server.call('POST', path, { key: read }), 403, 'insufficient_scope');
    await expectProblem(await server.call('POST', path, { key: null }), 401, 'unauthenticated');
    const other = await server.addNetwork();
    await expectProblem(await server.call('POST', path, { key: other.apiKey }), 404, 'not_found');
    await expectProblem(await server.call('POST', '/v1/devices/dev_nope/approve'), 404, 'not_found');
    expect((await getDevice(server, waiting.device.id)).body.authorized).toBe(false);

    const devices = await apiKey(server, ['devices']);
    expect(
      (await server.call('POST', path, { key: devices, headers: { 'content-type': 'application/json' } })).status,
    ).toBe(200);
    await expectProblem(await server.call('POST', path), 409, 'invalid_state');
    expect((await eventTypes(server, '?since=1d&type=device.approved')).length).toBe(1);
  });
});

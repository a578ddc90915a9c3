/**
 * What POST /v1/node/register and /heartbeat make of their inputs: a node key is a public key
 * whatever the case of its hex digits (one key, one device), the zero key is none, and an exit
 * node's default routes come as a pair.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  auditEntries,
  countDevices,
  createAuthKey,
  enroll,
  expectProblem,
  heartbeat,
  newNodeKey,
  register,
} from '../../devices/helpers.js';
import { json, startServer, type TestServer } from '../../harness.js';

describe('POST /v1/node/register: node keys and advertised routes', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    server = await startServer();
    authKey = (await createAuthKey(server, { reusable: true })).key;
  });
  afterAll(() => server.close());

  const routesOf = async (id: string) =>
    ((await json(await server.call('GET', `/v1/routes?device=${id}`))).routes as { prefix: string }[])
      .map((r) => r.prefix)
      .sort();

  it('takes hex digits of either case as one key: the same device re-enrolls, the old credential is refused', async () => {
    const lower = newNodeKey();
    const upper = `nodekey:${lower.slice('nodekey:'.length).toUpperCase()}`;
    const first = await enroll(server, authKey, { hostname: 'case', nodeKey: upper });
    const again = await enroll(server, authKey, { hostname: 'case', nodeKey: lower });
    expect(again.device.id).toBe(first.device.id);
    expect(again.device.addresses).toEqual(first.device.addresses);
    expect(again.nodeToken).not.toBe(first.nodeToken);
    await expectProblem(
      await server.call('POST', '/v1/node/heartbeat', { key: first.nodeToken }),
      401,
      'unauthenticated',
    );
    const stored = await server.database.storage.db
      .selectFrom('devices')
      .select('node_key')
      .where('id', '=', first.device.id)
      .executeTakeFirstOrThrow();
    expect(stored.node_key).toBe(lower);
  });

  it('refuses the zero key, another prefix, other lengths, other characters and spaces, enrolling nothing', async () => {
    const before = await countDevices(server);
    const hex = newNodeKey().slice('nodekey:'.length);
    for (const nodeKey of [
      `nodekey:${'0'.repeat(64)}`,
      `NODEKEY:${hex}`,
      `mkey:${hex}`,
      `nodekey:${hex.slice(2)}`,
      `nodekey:${hex}00`,
      `nodekey:${hex.slice(1)}g`,
      ` nodekey:${hex}`,
      `nodekey:${hex} `,
      hex,
    ]) {
      const problem = await expectProblem(await register(server, authKey, { nodeKey }), 400, 'invalid_request');
      expect(problem.detail, nodeKey).toMatch(/^nodeKey /);
    }
    expect(await countDevices(server)).toBe(before);
  });

  it('takes the hostname and os without the spaces around them, and refuses ones of spaces alone', async () => {
    const { device } = await enroll(server, authKey, { hostname: '  spaced  ', os: ' linux\n' });
    expect(device).toMatchObject({ hostname: 'spaced', name: 'spaced', os: 'linux' });
    // What `hostname` may print: 64 characters on Linux, a whole DNS name on macOS. The name is
    // the first label, cut to a DNS label's 63.
    const linux = 'l'.repeat(64);
    expect((await enroll(server, authKey, { hostname: linux })).device).toMatchObject({
      hostname: linux,
      name: 'l'.repeat(63),
    });
    const fqdn = `${'m'.repeat(40)}.${'sub'.repeat(60)}.example.com`;
    expect((await enroll(server, authKey, { hostname: fqdn })).device).toMatchObject({
      hostname: fqdn,
      name: 'm'.repeat(40),
    });
    await expectProblem(await register(server, authKey, { hostname: 'h'.repeat(254) }), 400, 'invalid_request');
    const before = await countDevices(server);
    for (const blank of [' ', '\t\n ']) {
      const problem = await expectProblem(await register(server, authKey, { hostname: blank }), 400, 'invalid_request');
      expect(problem.detail).toMatch(/^hostname /);
      const os = await expectProblem(await register(server, authKey, { os: blank }), 400, 'invalid_request');
      expect(os.detail).toMatch(/^os /);
    }
    expect(await countDevices(server)).toBe(before);
  });

  it('records a registration that enrolls nothing under its auth key, one that enrolls under its device', async () => {
    const key = await createAuthKey(server, { reusable: true, description: 'ci runners' });
    const bad = await register(server, key.key, { nodeKey: 'nodekey:nope' });
    const good = await enroll(server, key.key, { hostname: 'audited' });
    expect((await server.call('DELETE', `/v1/keys/${key.id}`)).status).toBe(204);
    const revoked = await register(server, key.key);
    expect([bad.status, revoked.status]).toEqual([400, 401]);
    const entries = (await auditEntries(server)).filter((e) => e.path === '/v1/node/register');
    const byRequest = (res: Response) => entries.find((e) => e.requestId === res.headers.get('x-request-id'));
    for (const refused of [bad, revoked]) {
      expect(byRequest(refused)).toMatchObject({ keyId: key.id, keyName: 'ci runners', deviceId: null });
    }
    // The filter of GET /v1/logs/audit finds them: who is still trying a revoked key.
    const filtered = await json(await server.call('GET', `/v1/logs/audit?since=1h&key=${key.id}`));
    expect(filtered.entries.map((e: { status: number }) => e.status)).toEqual([400, 401]);
    const enrolled = entries.find((e) => e.status === 201 && e.deviceId === good.device.id);
    expect(enrolled).toMatchObject({ keyId: null, keyName: null, action: 'device.enroll' });
  });

  it('refuses one default route without the other, at registration and in a heartbeat, changing nothing', async () => {
    const before = await countDevices(server);
    for (const [given, missing] of [
      ['0.0.0.0/0', '::/0'],
      ['::/0', '0.0.0.0/0'],
    ]) {
      const problem = await expectProblem(
        await register(server, authKey, { advertiseRoutes: ['10.1.0.0/16', given] }),
        400,
        'invalid_prefix',
      );
      expect(problem.detail).toContain(`"${given}"`);
      expect(problem.detail).toContain(`add ${missing}`);
    }
    expect(await countDevices(server)).toBe(before);

    const { device, nodeToken } = await enroll(server, authKey, { hostname: 'gw', advertiseRoutes: ['10.1.0.0/16'] });
    const refused = await heartbeat(server, nodeToken, { advertiseRoutes: ['10.1.0.0/16', '0.0.0.0/0'] });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('invalid_prefix');
    expect(await routesOf(device.id)).toEqual(['10.1.0.0/16']);

    // Both together are an exit node's advertisement, as `tailscale up --advertise-exit-node`.
    expect((await heartbeat(server, nodeToken, { advertiseRoutes: ['::/0', '0.0.0.0/0', '10.1.0.0/16'] })).status).toBe(
      200,
    );
    expect(await routesOf(device.id)).toEqual(['0.0.0.0/0', '10.1.0.0/16', '::/0']);
  });
});

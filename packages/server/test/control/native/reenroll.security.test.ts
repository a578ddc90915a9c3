/**
 * Re-enrollment of a known nodeKey keeps the device's owner: an auth key of another user or
 * with other tags is refused (409) and changes nothing, so knowing a device's public key is
 * not enough to take it over.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineTags } from '../../acl/helpers.js';
import {
  auditEntries,
  createAuthKey,
  enroll,
  expectProblem,
  getDevice,
  heartbeat,
  newNodeKey,
  register,
} from '../../devices/helpers.js';
import { json, startServer, type TestServer } from '../../harness.js';

describe('re-enrollment keeps the owner', () => {
  let server: TestServer;
  let ana: string;
  beforeAll(async () => {
    server = await startServer();
    await defineTags(server, ['tag:a', 'tag:b']);
    ana = (await json(await server.call('POST', '/v1/users', { body: { loginName: 'ana@example.com' } }))).id;
  });
  afterAll(() => server.close());

  /** Enrolls a device, then tries to re-enroll it with a key of another owner. */
  async function refusedTakeover(first: Record<string, unknown>, second: Record<string, unknown>) {
    const nodeKey = newNodeKey();
    const original = await enroll(server, (await createAuthKey(server, first)).key, { nodeKey, hostname: 'victim' });
    const before = (await getDevice(server, original.device.id)).body;
    const thief = await createAuthKey(server, second);
    const body = await expectProblem(
      await register(server, thief.key, { nodeKey, hostname: 'thief', os: 'windows' }),
      409,
      'invalid_state',
    );
    expect(body.detail).toContain(original.device.id);
    // nothing changed: the device, its credential, and the thief's single-use key
    expect((await getDevice(server, original.device.id)).body).toEqual(before);
    expect((await heartbeat(server, original.nodeToken)).status).toBe(200);
    expect(await json(await server.call('GET', `/v1/keys/${thief.id}`))).toMatchObject({ uses: 0, state: 'valid' });
    return body;
  }

  it('refuses a key with other tags', async () => {
    const body = await refusedTakeover({ tags: ['tag:a'] }, { tags: ['tag:b'] });
    expect(body.detail).toContain('tag:b');
  });

  it('refuses a key that would drop or add tags', async () => {
    await refusedTakeover({ tags: ['tag:a'] }, {});
    await refusedTakeover({}, { tags: ['tag:a'] });
    await refusedTakeover({ tags: ['tag:a'] }, { tags: ['tag:a', 'tag:b'] });
  });

  it('refuses a key of another user', async () => {
    const body = await refusedTakeover({}, { user: ana });
    expect(body.detail).toContain('another user');
    await refusedTakeover({ user: ana, tags: ['tag:a'] }, { tags: ['tag:a'] });
  });

  it('audits the refusal without a change', async () => {
    await refusedTakeover({ user: ana }, {});
    const refused = (await auditEntries(server)).filter((e) => e.path === '/v1/node/register' && e.status === 409);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((e) => e.action == null)).toBe(true);
  });

  it('still re-enrolls with another key of the same user and tags', async () => {
    const nodeKey = newNodeKey();
    const first = await enroll(server, (await createAuthKey(server, { user: ana, tags: ['tag:a'] })).key, {
      nodeKey,
      hostname: 'laptop',
    });
    const again = await enroll(server, (await createAuthKey(server, { user: ana, tags: ['tag:a'] })).key, {
      nodeKey,
      hostname: 'laptop',
    });
    expect(again.device.id).toBe(first.device.id);
    expect((await heartbeat(server, first.nodeToken)).status).toBe(401);
    expect((await heartbeat(server, again.nodeToken)).status).toBe(200);
  });
});

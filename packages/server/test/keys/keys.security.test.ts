/**
 * No escalation through keys: an auth key never outlives the API key that created it, and a
 * key deletes only keys whose scopes it holds itself.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

describe('keys: no escalation', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const createKey = async (body: Record<string, unknown>, key?: string) => {
    const res = await server.call('POST', '/v1/keys', { body, key });
    const created = await json(res);
    expect(res.status, JSON.stringify(created)).toBe(201);
    return created;
  };
  const apiKey = (scopes: string[], expiresIn = '7d') =>
    createKey({ type: 'api', name: `k-${scopes.join('-')}`, scopes, expiresIn });
  const keyCount = async () => (await json(await server.call('GET', '/v1/keys'))).keys.length;
  const stateOf = async (id: string) => (await json(await server.call('GET', `/v1/keys/${id}`))).state;

  it('caps an auth key at the expiry of the API key that creates it', async () => {
    const creator = await apiKey(['keys'], '7d');
    const byDefault = await createKey({ reusable: true }, creator.key);
    expect(byDefault.expires).toBe(creator.expires);
    const shorter = await createKey({ expiresIn: '6d' }, creator.key);
    expect(Date.parse(shorter.expires)).toBeLessThan(Date.parse(creator.expires));

    const before = await keyCount();
    const body = await expectProblem(
      await server.call('POST', '/v1/keys', { key: creator.key, body: { expiresIn: '8d' } }),
      403,
      'insufficient_scope',
    );
    expect(body.detail).toContain('outlives');
    expect(await keyCount()).toBe(before);
  });

  it('refuses to delete a key with scopes the caller lacks, naming them, and changes nothing', async () => {
    const caller = await apiKey(['acls', 'keys']);
    const all = await apiKey(['all']);
    const wide = await apiKey(['devices', 'read', 'acls']);

    let body = await expectProblem(
      await server.call('DELETE', `/v1/keys/${all.id}`, { key: caller.key }),
      403,
      'insufficient_scope',
    );
    expect(body.detail).toContain('"all"');
    expect(body.scope).toBe('all');
    expect(await stateOf(all.id)).toBe('valid');
    expect((await server.call('GET', '/v1/network', { key: all.key })).status).toBe(200);

    body = await expectProblem(
      await server.call('DELETE', `/v1/keys/${wide.id}`, { key: caller.key }),
      403,
      'insufficient_scope',
    );
    expect(body.detail).toContain('"devices", "read"');
    expect(body.detail).not.toContain('"acls"');
    expect(await stateOf(wide.id)).toBe('valid');
  });

  it('deletes keys within the caller’s scopes, and auth keys with any keys key', async () => {
    const caller = await apiKey(['acls', 'keys']);
    const narrower = await apiKey(['acls']);
    const same = await apiKey(['keys', 'acls']);
    const auth = await createKey({ tags: [], description: 'enrol' });
    for (const target of [narrower, same, auth]) {
      expect((await server.call('DELETE', `/v1/keys/${target.id}`, { key: caller.key })).status).toBe(204);
      expect(await stateOf(target.id)).toBe('revoked');
    }
    const onlyKeys = await apiKey(['keys']);
    const auth2 = await createKey({ reusable: true });
    expect((await server.call('DELETE', `/v1/keys/${auth2.id}`, { key: onlyKeys.key })).status).toBe(204);
    // an `all` key deletes anything, and a key may delete itself
    expect((await server.call('DELETE', `/v1/keys/${caller.id}`)).status).toBe(204);
    expect((await server.call('DELETE', `/v1/keys/${onlyKeys.id}`, { key: onlyKeys.key })).status).toBe(204);
  });
});

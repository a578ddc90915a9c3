/**
 * A NUL character (U+0000) in any value a request carries is a 400 that changes nothing, on
 * every backend. PostgreSQL cannot store or even compare text holding one, so each of these
 * was a 500 there (and stored as given on SQLite): a body field, a path or query value, and a
 * policy with one in a comment, which validation passed and PUT then failed to store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem, register, startWithAuthKey } from '../devices/helpers.js';
import { json, type TestServer } from '../harness.js';

describe('NUL characters in requests', () => {
  let server: TestServer;
  let authKey: string;

  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
  });
  afterAll(() => server.close());

  const userCount = async () => (await json(await server.call('GET', '/v1/users'))).users.length;

  it('refuses one in a JSON body, at any depth, and creates nothing', async () => {
    const before = await userCount();
    const bodies = [
      { loginName: 'nul@example.com', displayName: 'a\u0000b' },
      { loginName: 'n\u0000l@example.com' },
      { loginName: 'nul@example.com', 'x\u0000': 1 },
    ];
    for (const body of bodies)
      await expectProblem(await server.call('POST', '/v1/users', { body }), 400, 'invalid_request');
    await expectProblem(await register(server, authKey, { hostname: 'web\u0000' }), 400, 'invalid_request');
    expect(await userCount()).toBe(before);
    expect((await json(await server.call('GET', '/v1/devices'))).devices).toEqual([]);
  });

  it('refuses half of a UTF-16 pair (a lone surrogate), which each backend stored differently', async () => {
    // JSON.stringify writes a lone surrogate as its escape, as a client's encoder would.
    const before = await userCount();
    for (const displayName of ['\ud800', 'a\udfffb', 'x\ud83d'])
      await expectProblem(
        await server.call('POST', '/v1/users', { body: { loginName: 'half@example.com', displayName } }),
        400,
        'invalid_request',
      );
    await expectProblem(await server.call('POST', '/v1/users', { body: { '\ud800': 1 } }), 400, 'invalid_request');
    expect(await userCount()).toBe(before);
    const whole = await server.call('POST', '/v1/users', {
      raw: '{"loginName":"pair@example.com","displayName":"\\ud83d\\ude00 \\u00e9"}',
      headers: { 'content-type': 'application/json' },
    });
    expect(whole.status).toBe(201);
    expect((await json(whole)).displayName).toBe('\u{1f600} \u00e9');
  });

  it('takes a backslash followed by u0000 as the text it is', async () => {
    const res = await server.call('POST', '/v1/users', {
      body: { loginName: 'backslash@example.com', displayName: 'a\\u0000b' },
    });
    expect(res.status).toBe(201);
    expect((await json(res)).displayName).toBe('a\\u0000b');
  });

  it.each([
    '/v1/devices/dev_a%00b',
    '/v1/keys/key_%00',
    '/v1/routes?device=web%00',
    '/v1/devices?user=a%00@example.com',
    '/v1/logs/connections?device=a%00b',
  ])('refuses one in the request target %s', async (target) => {
    await expectProblem(await server.call('GET', target), 400, 'invalid_request');
  });

  it('reports one in a policy, even in a comment, at its line and column, and stores nothing', async () => {
    const before = await server.call('GET', '/v1/acl');
    const text = '{\n  // a comment with a \u0000 in it\n  "acls": [],\n}\n';
    const expected = [{ line: 2, column: 23, msg: expect.stringContaining('NUL') }];
    const check = await json(
      await server.call('POST', '/v1/acl/validate', { raw: text, headers: { 'content-type': 'application/hujson' } }),
    );
    expect(check).toMatchObject({ valid: false, errors: expected });
    const put = await server.call('PUT', '/v1/acl', { raw: text, headers: { 'content-type': 'application/hujson' } });
    expect((await expectProblem(put, 400, 'policy_invalid')).errors).toMatchObject(expected);
    expect((await server.call('GET', '/v1/acl')).headers.get('etag')).toBe(before.headers.get('etag'));
  });
});

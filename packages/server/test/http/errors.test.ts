import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';

describe('problem responses', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  const expectProblem = async (res: Response, status: number, code: string) => {
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const body = await json(res);
    expect(body).toMatchObject({ type: 'about:blank', status, code });
    expect(typeof body.title).toBe('string');
    expect(typeof body.detail).toBe('string');
    expect(body.requestId).toBeTruthy();
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts:\d+|select |insert into/i);
    return body;
  };

  it('answers an unknown route with 404 not_found', async () => {
    await expectProblem(await server.call('GET', '/v1/nothing-here'), 404, 'not_found');
    await expectProblem(await server.call('GET', '/nothing'), 404, 'not_found');
  });

  it('answers malformed JSON with 400 invalid_request', async () => {
    await expectProblem(
      await server.call('POST', '/v1/keys', {
        raw: '{"reusable": tru',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_request',
    );
  });

  it('answers a body over 1 MiB with 413 payload_too_large and creates nothing', async () => {
    const huge = JSON.stringify({ description: 'x'.repeat(1024 * 1024 + 10) });
    await expectProblem(
      await server.call('POST', '/v1/keys', { raw: huge, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
  });

  it('answers a body that is not JSON with 415', async () => {
    await expectProblem(
      await server.call('POST', '/v1/keys', { raw: 'hello', headers: { 'content-type': 'text/plain' } }),
      415,
      'unsupported_media_type',
    );
    await expectProblem(
      await server.call('POST', '/v1/users', { raw: '<user/>', headers: { 'content-type': 'application/xml' } }),
      415,
      'unsupported_media_type',
    );
  });

  it('rejects unknown fields naming them', async () => {
    const body = await expectProblem(
      await server.call('POST', '/v1/users', { body: { loginName: 'a@example.com', colour: 'red' } }),
      400,
      'unknown_field',
    );
    expect(body.detail).toContain('colour');
  });

  it.each([
    ['POST', '/v1/keys', { description: 'x', colour: 'red' }],
    ['POST', '/v1/keys', { type: 'api', name: 'x', scopes: ['read'], colour: 'red' }],
    ['POST', '/v1/users', { loginName: 'b@example.com', colour: 'red' }],
    ['PATCH', '/v1/users/{owner}', { role: 'owner', colour: 'red' }],
  ])('answers %s %s with an unknown field with 400 unknown_field and changes nothing', async (method, path, body) => {
    const users = await json(await server.call('GET', '/v1/users'));
    const owner = users.users.find((u: { role: string }) => u.role === 'owner').id;
    // ids only: the calling key's own uses and lastUsed move with every call
    const keyIds = async () => (await json(await server.call('GET', '/v1/keys'))).keys.map((k: { id: string }) => k.id);
    const keys = await keyIds();
    const res = await server.call(method, path.replace('{owner}', owner), { body });
    expect((await expectProblem(res, 400, 'unknown_field')).detail).toContain('colour');
    expect(await json(await server.call('GET', '/v1/users'))).toEqual(users);
    expect(await keyIds()).toEqual(keys);
  });

  it.each([
    ['__proto__', '{"loginName":"proto@example.com","__proto__":{"role":"owner"}}'],
    ['constructor', '{"loginName":"proto@example.com","constructor":{"prototype":{"role":"owner"}}}'],
  ])('answers a body with %s, valid JSON that is refused unread, with 400 unknown_field', async (field, raw) => {
    const before = await json(await server.call('GET', '/v1/users'));
    const res = await server.call('POST', '/v1/users', { raw, headers: { 'content-type': 'application/json' } });
    expect((await expectProblem(res, 400, 'unknown_field')).detail).toBe(`unknown field "${field}" in body`);
    expect(await json(await server.call('GET', '/v1/users'))).toEqual(before);
  });

  it('answers a user body over 1 MiB with 413 payload_too_large', async () => {
    const huge = JSON.stringify({ loginName: 'big@example.com', displayName: 'x'.repeat(1024 * 1024 + 10) });
    await expectProblem(
      await server.call('POST', '/v1/users', { raw: huge, headers: { 'content-type': 'application/json' } }),
      413,
      'payload_too_large',
    );
    const users = (await json(await server.call('GET', '/v1/users'))).users;
    expect(users.map((u: { loginName: string }) => u.loginName)).not.toContain('big@example.com');
  });

  it('names the allowed values of an enumerated field', async () => {
    const body = await expectProblem(await server.call('GET', '/v1/keys?type=nope'), 400, 'invalid_request');
    expect(body.detail).toBe('querystring field "type" must be one of "auth", "api"');
  });

  it('refuses an integer in a query string or path unless it is plain decimal, as it refuses a word', async () => {
    const paths = ['/v1/logs/connections?limit=', '/v1/logs/audit?limit=', '/v1/events?limit=', '/v1/devices?limit='];
    for (const path of paths) {
      const word = await expectProblem(await server.call('GET', `${path}abc`), 400, 'invalid_request');
      for (const written of ['0x10', '1e2', '%205', '5%20', '+5', '%2B5', '5.0', '0b1', '1_0', '']) {
        const body = await expectProblem(await server.call('GET', `${path}${written}`), 400, 'invalid_request');
        expect(body.detail, `${path}${written}`).toBe(word.detail);
      }
      // Plain decimal still works, leading zeros and all.
      expect((await server.call('GET', `${path}5`)).status, path).toBe(200);
      expect((await server.call('GET', `${path}005`)).status, path).toBe(200);
    }
    for (const version of ['0x1', '1e0', '+1', '%201']) {
      await expectProblem(await server.call('GET', `/v1/acl/history/${version}`), 400, 'invalid_request');
    }
    expect((await server.call('GET', '/v1/acl/history/1')).status).toBe(200);
  });

  it('treats a POST without a body as an empty object', async () => {
    const res = await server.call('POST', '/v1/keys');
    expect(res.status).toBe(201);
  });
});

/**
 * An empty body is no body, whatever Content-Type a client declares: generic HTTP clients
 * send `Content-Type: application/json` on a DELETE or an action POST too. A body that is
 * there and is not JSON is still refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enroll, expectProblem, startWithAuthKey } from '../devices/helpers.js';
import { json, type TestServer } from '../harness.js';
import { rawSocket } from './raw-http.js';

/** The ways of sending nothing: an explicit zero length, no length at all, an empty chunked body. */
const EMPTY = {
  'Content-Length: 0': { headers: ['Content-Length: 0'], body: '' },
  'no body at all': { headers: [], body: '' },
  'an empty chunked body': { headers: ['Transfer-Encoding: chunked'], body: '0\r\n\r\n' },
} as const;

const TYPES = ['application/json', 'application/json; charset=utf-8', 'text/plain', 'application/octet-stream'];

describe('requests without a body', () => {
  let server: TestServer;
  let authKey: string;

  function send(method: string, path: string, type: string, empty: keyof typeof EMPTY, token = server.apiKey) {
    const { headers, body } = EMPTY[empty];
    const lines = [`${method} ${path} HTTP/1.1`, 'Host: warren.test', `Authorization: Bearer ${token}`];
    lines.push(`Content-Type: ${type}`, ...headers, 'Connection: close');
    return rawSocket(server.url, `${lines.join('\r\n')}\r\n\r\n${body}`);
  }

  beforeAll(async () => {
    ({ server, authKey } = await startWithAuthKey());
  });
  afterAll(() => server.close());

  const cases = TYPES.flatMap((type) =>
    (Object.keys(EMPTY) as (keyof typeof EMPTY)[])
      .filter((empty) => type.startsWith('application/json') || empty !== 'an empty chunked body')
      .map((empty) => [type, empty] as const),
  );

  it.each(cases)('accepts DELETE /v1/keys/{id} with %s and %s', async (type, empty) => {
    const key = await json(await server.call('POST', '/v1/keys', { body: { description: 'to delete' } }));
    const res = await send('DELETE', `/v1/keys/${key.id}`, type, empty);
    expect(res.status, res.body).toBe(204);
    expect((await json(await server.call('GET', `/v1/keys/${key.id}`))).state).toBe('revoked');
  });

  it.each(cases)('accepts approving a route with %s and %s', async (type, empty) => {
    const { device } = await enroll(server, authKey, { advertiseRoutes: ['10.9.0.0/24'] });
    const routes = (await json(await server.call('GET', `/v1/routes?device=${device.id}`))).routes;
    const res = await send('POST', `/v1/routes/${routes[0].id}/approve`, type, empty);
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body).state).toBe('approved');
  });

  it.each(cases)('accepts a device disconnecting with %s and %s', async (type, empty) => {
    const { device, nodeToken } = await enroll(server, authKey);
    const res = await send('POST', '/v1/node/disconnect', type, empty, nodeToken);
    expect(res.status, res.body).toBe(204);
    expect((await json(await server.call('GET', `/v1/devices/${device.id}`))).online).toBe(false);
  });

  it('treats an empty JSON body of a create as {} (defaults apply)', async () => {
    const res = await send('POST', '/v1/keys', 'application/json', 'Content-Length: 0');
    expect(res.status, res.body).toBe(201);
    expect(JSON.parse(res.body)).toMatchObject({ type: 'auth', reusable: false });
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream'])(
    'treats an empty body declared as %s as no body on a create too (defaults apply)',
    async (type) => {
      // `curl -X POST -d ''` declares a form; the body is no less empty for it.
      const res = await send('POST', '/v1/keys', type, 'Content-Length: 0');
      expect(res.status, res.body).toBe(201);
      expect(JSON.parse(res.body)).toMatchObject({ type: 'auth', reusable: false });
    },
  );

  it('refuses a field sent to a call that takes no body, as in any other body, and changes nothing', async () => {
    const { device } = await enroll(server, authKey, { advertiseRoutes: ['10.8.0.0/24'] });
    const [route] = (await json(await server.call('GET', `/v1/routes?device=${device.id}`))).routes;
    const approve = (body: unknown) => server.call('POST', `/v1/routes/${route.id}/approve`, { body });
    const unknown = await expectProblem(await approve({ force: true }), 400, 'unknown_field');
    expect(unknown.detail).toContain('"force"');
    const notObject = await expectProblem(await approve(['approve']), 400, 'invalid_request');
    // The path as the documentation writes it, not the router's pattern.
    expect(notObject.detail).toBe('POST /v1/routes/{id}/approve takes no body; send none, {} or null');
    const key = await json(await server.call('POST', '/v1/keys', { body: { description: 'stays too' } }));
    await expectProblem(
      await server.call('DELETE', `/v1/keys/${key.id}`, { body: { why: 'x' } }),
      400,
      'unknown_field',
    );
    expect((await json(await server.call('GET', `/v1/routes?device=${device.id}`))).routes[0].state).toBe('pending');
    expect((await json(await server.call('GET', `/v1/keys/${key.id}`))).state).toBe('valid');
    // {} and null hold nothing, so they are no body.
    expect((await approve(null)).status).toBe(200);
    expect((await server.call('POST', `/v1/routes/${route.id}/disable`, { body: {} })).status).toBe(200);
  });

  it('still refuses a body that is there and is not JSON with 415, and changes nothing', async () => {
    const key = await json(await server.call('POST', '/v1/keys', { body: { description: 'stays' } }));
    const res = await server.call('DELETE', `/v1/keys/${key.id}`, {
      raw: 'please',
      headers: { 'content-type': 'text/plain' },
    });
    await expectProblem(res, 415, 'unsupported_media_type');
    expect((await json(await server.call('GET', `/v1/keys/${key.id}`))).state).toBe('valid');
  });

  it('still refuses a JSON body that is not JSON with 400', async () => {
    const res = await server.call('POST', '/v1/keys', { raw: '{', headers: { 'content-type': 'application/json' } });
    await expectProblem(res, 400, 'invalid_request');
  });
});

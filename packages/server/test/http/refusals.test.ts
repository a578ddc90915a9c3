/**
 * Refusals made below the pipeline — by the router (bad encoding, a parameter too long) or
 * by Node's HTTP parser (headers too large, an unknown method, a malformed request line) —
 * are problems with a stable code and a request id, and are written to the audit log.
 */

import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { expectRawProblem, rawSocket } from './raw-http.js';

const request = (line: string, headers: string[] = []) =>
  `${line}\r\n${['Host: warren.test', ...headers, 'Connection: close'].join('\r\n')}\r\n\r\n`;

describe('refusals below the pipeline', () => {
  let server: TestServer;
  let bearer: string;

  /** Audit rows of a request id, read from the database: some belong to no network. */
  async function auditOf(requestId: string) {
    await server.app.ctx.audit.flush();
    return server.database.storage.db
      .selectFrom('audit_log')
      .select(['network_id', 'key_id', 'method', 'path', 'status', 'client_addr'])
      .where('request_id', '=', requestId)
      .execute();
  }

  beforeAll(async () => {
    server = await startServer();
    bearer = `Authorization: Bearer ${server.apiKey}`;
  });
  afterAll(() => server.close());

  it('answers a path that is not valid percent-encoding with 400, audited in the caller’s network', async () => {
    const res = await rawSocket(server.url, request('GET /v1/devices/%E0%A4%A HTTP/1.1', [bearer]));
    const body = expectRawProblem(res, 400, 'invalid_request');
    expect(res.headers['ratelimit-limit']).toBeDefined();
    expect(await auditOf(body.requestId)).toEqual([
      {
        network_id: server.networkId,
        key_id: expect.stringMatching(/^key_/),
        method: 'GET',
        path: '/v1/devices/%E0%A4%A',
        status: 400,
        client_addr: '127.0.0.1',
      },
    ]);
    // Without a key the request is just as malformed: 400, audited under no network.
    const anonymous = expectRawProblem(
      await rawSocket(server.url, request('GET /v1/devices/%E0%A4%A HTTP/1.1')),
      400,
      'invalid_request',
    );
    expect(await auditOf(anonymous.requestId)).toMatchObject([{ network_id: null, key_id: null, status: 400 }]);
  });

  it('answers an id over the parameter limit with 414 uri_too_long', async () => {
    const res = await rawSocket(server.url, request(`DELETE /v1/devices/dev_${'x'.repeat(300)} HTTP/1.1`, [bearer]));
    const body = expectRawProblem(res, 414, 'uri_too_long');
    expect(await auditOf(body.requestId)).toMatchObject([
      { network_id: server.networkId, method: 'DELETE', status: 414 },
    ]);
    // An id just under the limit reaches the route, which judges it.
    const fits = await server.call('GET', `/v1/devices/dev_${'x'.repeat(190)}`);
    expect([400, 404]).toContain(fits.status);
  });

  it.each([
    ['a header', 'GET /v1/devices HTTP/1.1', [`X-Padding: ${'a'.repeat(20_000)}`], 431, 'headers_too_large'],
    // A request line over the limit is a target too long to read (RFC 9112 §3).
    ['a query string', `GET /v1/devices?tag=${'a'.repeat(20_000)} HTTP/1.1`, [], 414, 'uri_too_long'],
  ])('answers %s over the header limit with %i %s', async (_what, line, headers, status, code) => {
    const bytes = request(line, [bearer, ...headers]);
    const body = expectRawProblem(await rawSocket(server.url, bytes), status, code);
    const rows = await auditOf(body.requestId);
    expect(rows).toMatchObject([{ network_id: null, method: 'GET', path: '/v1/devices', status }]);
  });

  it('answers a method Node does not know with 405 and Allow on a served path, 404 elsewhere', async () => {
    const res = await rawSocket(server.url, request('FOO /v1/devices HTTP/1.1', [bearer]));
    const body = expectRawProblem(res, 405, 'method_not_allowed');
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(await auditOf(body.requestId)).toMatchObject([{ method: 'FOO', path: '/v1/devices', status: 405 }]);
    expectRawProblem(await rawSocket(server.url, request('FOO /v1/nothing HTTP/1.1')), 404, 'not_found');
  });

  it('answers a served path under another method with 405 and Allow, after authentication', async () => {
    const res = await server.call('PUT', '/v1/devices');
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect((await json(res)).code).toBe('method_not_allowed');
    const withId = await server.call('PATCH', '/v1/keys/key_0123456789abcdef');
    expect(withId.headers.get('allow')).toBe('GET, HEAD, DELETE');
    // A method the parser knows but the API does not serve, and no key: 401 like any call.
    expect((await server.call('PROPFIND', '/v1/devices', { key: null })).status).toBe(401);
    expect((await server.call('PUT', '/v1/devices', { key: null })).status).toBe(401);
  });

  it.each([
    ['a space in the path', 'GET /v1 devices HTTP/1.1'],
    ['a target that is not a path', 'GET %2Fv1/devices HTTP/1.1'],
    ['no target at all', 'GET'],
    ['an unknown protocol', 'GET /v1/devices XTTP/1.1'],
  ])('answers a malformed request line (%s) with 400 invalid_request', async (_what, line) => {
    const body = expectRawProblem(await rawSocket(server.url, request(line)), 400, 'invalid_request');
    const rows = await auditOf(body.requestId);
    expect(rows).toMatchObject([{ network_id: null, status: 400, client_addr: '127.0.0.1' }]);
  });

  it('answers a malformed header with 400 invalid_request', async () => {
    const bytes = request('GET /v1/devices HTTP/1.1', [bearer, 'Bad Header: x']);
    expectRawProblem(await rawSocket(server.url, bytes), 400, 'invalid_request');
  });

  describe('codings and expectations the server does not implement', () => {
    const keyCount = async () => (await json(await server.call('GET', '/v1/keys'))).keys.length;
    const post = (headers: string[], body: string) =>
      `POST /v1/keys HTTP/1.1\r\n${['Host: warren.test', bearer, 'Content-Type: application/json', ...headers, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`;
    const body = JSON.stringify({ type: 'auth' });

    it('refuses a compressed body with 415 instead of reading it as JSON, and creates nothing', async () => {
      const before = await keyCount();
      for (const coding of ['gzip', 'br', 'deflate, gzip', 'zstd']) {
        const res = await rawSocket(
          server.url,
          post([`Content-Encoding: ${coding}`, `Content-Length: ${body.length}`], body),
        );
        expectRawProblem(res, 415, 'unsupported_media_type');
      }
      // `identity` is no coding at all.
      const plain = await rawSocket(
        server.url,
        post(['Content-Encoding: identity', `Content-Length: ${body.length}`], body),
      );
      expect(plain.status, plain.body).toBe(201);
      expect(await keyCount()).toBe(before + 1);
    });

    it('refuses a transfer coding other than chunked with 501, and creates nothing', async () => {
      const before = await keyCount();
      const chunked = `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`;
      const res = await rawSocket(server.url, post(['Transfer-Encoding: gzip, chunked'], chunked));
      expectRawProblem(res, 501, 'not_implemented');
      expect(await keyCount()).toBe(before);
    });

    it('answers an expectation other than 100-continue with a 417 problem, not Node’s bare 417', async () => {
      const before = await keyCount();
      const res = await rawSocket(server.url, post(['Expect: 200-ok', `Content-Length: ${body.length}`], body));
      const problem = expectRawProblem(res, 417, 'expectation_failed');
      expect(await auditOf(problem.requestId)).toMatchObject([{ status: 417 }]);
      expect(await keyCount()).toBe(before);
    });

    it('records each in the network of the key it came with, with its RateLimit headers', async () => {
      const refusals = [
        post(['Content-Encoding: gzip', `Content-Length: ${body.length}`], body),
        post(['Transfer-Encoding: gzip, chunked'], `${body.length.toString(16)}\r\n${body}\r\n0\r\n\r\n`),
        post(['Expect: 200-ok', `Content-Length: ${body.length}`], body),
      ];
      for (const raw of refusals) {
        const res = await rawSocket(server.url, raw);
        expect(res.headers['ratelimit-limit'], res.body).toBeDefined();
        const rows = await auditOf(JSON.parse(res.body).requestId);
        expect(rows).toMatchObject([{ network_id: server.networkId, key_id: expect.stringMatching(/^key_/) }]);
      }
      // Two Authorization headers leave the caller in doubt: under no network, as before, but
      // counted against the client's address like any call without a key, with its headers.
      const doubled = await rawSocket(server.url, post([bearer, `Content-Length: ${body.length}`], body));
      const problem = expectRawProblem(doubled, 400, 'invalid_request');
      expect(await auditOf(problem.requestId)).toMatchObject([{ network_id: null, key_id: null }]);
      const remaining = Number(doubled.headers['ratelimit-remaining']);
      expect(doubled.headers['ratelimit-limit']).toBeDefined();
      const again = await rawSocket(server.url, post([bearer, `Content-Length: ${body.length}`], body));
      expect(Number(again.headers['ratelimit-remaining'])).toBe(remaining - 1);
    });
  });

  it('records a request line it refuses in the network of the key it came with, with its RateLimit headers', async () => {
    for (const line of ['GET /v1/keys/%00 HTTP/1.1', `GET /v1/devices?x=${'a'.repeat(8200)} HTTP/1.1`]) {
      const res = await rawSocket(server.url, request(line, [bearer]));
      expect(res.headers['ratelimit-remaining'], res.body).toBeDefined();
      const rows = await auditOf(JSON.parse(res.body).requestId);
      expect(rows).toMatchObject([{ network_id: server.networkId, key_id: expect.stringMatching(/^key_/) }]);
    }
    // Without a key the line is just as malformed: audited under no network, as before.
    const anonymous = expectRawProblem(
      await rawSocket(server.url, request('GET /v1/keys/%00 HTTP/1.1')),
      400,
      'invalid_request',
    );
    expect(await auditOf(anonymous.requestId)).toMatchObject([{ network_id: null, key_id: null, status: 400 }]);
  });

  it('keeps serving after refusals', async () => {
    expect((await server.call('GET', '/v1/network')).status).toBe(200);
  });
});

describe('a server shutting down', () => {
  it('answers a request that completes during shutdown with 503 unavailable as a problem', async () => {
    const server = await startServer();
    const { port } = new URL(server.url);
    const socket = connect({ host: '127.0.0.1', port: Number(port) });
    await new Promise((resolve) => socket.once('connect', resolve));
    let raw = '';
    socket.on('data', (chunk) => {
      raw += chunk;
    });
    const closed = new Promise((resolve) => socket.once('close', resolve));
    // Half a request keeps the connection busy, so closing the server waits for it.
    socket.write(`GET /v1/network HTTP/1.1\r\nHost: warren.test\r\nAuthorization: Bearer ${server.apiKey}\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closing = server.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.end('\r\n');
    await closed;
    await closing;
    expect(raw).toMatch(/^HTTP\/1\.1 503 /);
    expect(raw).toMatch(/content-type: application\/problem\+json/i);
    expect(raw).toContain('"code":"unavailable"');
  });
});

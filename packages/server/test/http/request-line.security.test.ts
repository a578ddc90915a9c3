/**
 * The request line as RFC 9112 asks a server to judge it (§2.3 version, §3 request line and
 * 414, §3.2 the four forms of request target, §6.1 a transfer coding in HTTP/1.0), and the
 * methods no route serves (RFC 9110 §9). Every refusal is a problem with a request id, written
 * byte for byte on a raw socket as a hostile client would send it; none creates anything.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { expectRawProblem, rawSocket } from './raw-http.js';

describe('request lines', () => {
  let server: TestServer;
  let bearer: string;
  const send = (line: string, headers: string[] = [], body = '') =>
    rawSocket(server.url, `${[line, ...headers, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);
  const get = (line: string, headers: string[] = []) => send(line, ['Host: warren.test', bearer, ...headers]);
  const keyCount = async () => (await json(await server.call('GET', '/v1/keys'))).keys.length;

  beforeAll(async () => {
    server = await startServer();
    bearer = `Authorization: Bearer ${server.apiKey}`;
  });
  afterAll(() => server.close());

  describe('versions (RFC 9112 §2.3)', () => {
    it.each([
      ['HTTP/2.0, which Node’s parser reads as HTTP/1', 'GET /v1/network HTTP/2.0'],
      ['HTTP/3.0, which it refuses', 'GET /v1/network HTTP/3.0'],
      ['HTTP/9.9', 'GET /healthz HTTP/9.9'],
    ])('answers %s with 505 http_version_not_supported', async (_what, line) => {
      const body = expectRawProblem(await get(line), 505, 'http_version_not_supported');
      expect(body.detail).toContain('HTTP/1.1');
    });

    it('answers the HTTP/2 connection preface (prior knowledge) with 505', async () => {
      const res = await rawSocket(server.url, 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
      expectRawProblem(res, 505, 'http_version_not_supported');
    });

    it('answers a request line without a version (HTTP/0.9) with 505', async () => {
      const res = await rawSocket(server.url, 'GET /v1/network\r\n\r\n');
      expectRawProblem(res, 505, 'http_version_not_supported');
    });

    it('serves HTTP/1.0, with or without Host', async () => {
      expect((await send('GET /healthz HTTP/1.0')).status).toBe(200);
      expect((await send('GET /v1/network HTTP/1.0', [bearer])).status).toBe(200);
    });
  });

  describe('request targets (RFC 9112 §3.2)', () => {
    it('uses the authority of an absolute-form target and ignores Host (§3.2.2)', async () => {
      const res = await get('GET http://other.example/v1/network HTTP/1.1');
      expect(res.status, res.body).toBe(200);
      expect(JSON.parse(res.body).id).toBe(server.networkId);
      expect((await get('GET https://other.example:8443/v1/network?x=1 HTTP/1.1')).status).toBe(200);
      expect((await get('GET HTTP://[::1]:8080/v1/network HTTP/1.1')).status).toBe(200);
    });

    it('records an absolute-form call under its path, as the same call as the origin form', async () => {
      const res = await get('GET https://other.example:8443/v1/network?x=1 HTTP/1.1', ['X-Request-Id: absolute-form']);
      expect(res.status).toBe(200);
      const page = await json(await server.call('GET', '/v1/logs/audit?limit=1000'));
      const entry = page.entries.find((e: { requestId: string }) => e.requestId === 'absolute-form');
      expect(entry).toMatchObject({ method: 'GET', path: '/v1/network', status: 200 });
    });

    it.each([
      ['userinfo in the authority', 'GET http://user@evil.example/v1/network HTTP/1.1'],
      ['userinfo and password', 'GET http://user:pw@evil.example/v1/network HTTP/1.1'],
      ['a scheme other than http', 'GET ftp://other.example/v1/network HTTP/1.1'],
      ['a file URL', 'GET file:///etc/passwd HTTP/1.1'],
      ['an IPv6 literal that is not an address', 'GET http://[zz::1]/v1/network HTTP/1.1'],
      ['a port past 65535', 'GET http://other.example:65536/v1/network HTTP/1.1'],
      ['a port that is not a number', 'GET http://other.example:8x/v1/network HTTP/1.1'],
      ['a fragment', 'GET /v1/network#top HTTP/1.1'],
      ['a fragment in an absolute-form target', 'GET http://other.example/v1/network#top HTTP/1.1'],
      ['an asterisk for a method other than OPTIONS', 'GET * HTTP/1.1'],
      ['an asterisk for POST', 'POST * HTTP/1.1'],
    ])('refuses %s with 400 invalid_request', async (_what, line) => {
      const body = expectRawProblem(await get(line, ['Content-Length: 0']), 400, 'invalid_request');
      expect(body.detail).toMatch(/target/);
    });

    it('still refuses an invalid Host beside an absolute-form target (§3.2)', async () => {
      const res = await send('GET http://other.example/v1/network HTTP/1.1', ['Host: a b', bearer]);
      expectRawProblem(res, 400, 'invalid_request');
      const none = await send('GET http://other.example/v1/network HTTP/1.1', [bearer]);
      expectRawProblem(none, 400, 'invalid_request');
    });

    it('answers OPTIONS * with the methods the server implements, without a key', async () => {
      const res = await send('OPTIONS * HTTP/1.1', ['Host: warren.test']);
      expect(res.status, res.raw.slice(0, 300)).toBe(204);
      expect(res.headers.allow).toBe('GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS');
      expect(res.headers['x-request-id']).toMatch(/^req_[0-9a-f]{24}$/);
      expect(res.body).toBe('');
    });

    it('answers a target over 8 KiB with 414 uri_too_long, up to and past the header limit', async () => {
      for (const length of [8_193, 12_000, 20_000, 70_000]) {
        const res = await get(`GET /v1/devices?tag=${'a'.repeat(length)} HTTP/1.1`);
        const body = expectRawProblem(res, 414, 'uri_too_long');
        expect(body.detail).toContain('8192');
      }
      const path = await get(`GET /v1/${'a/'.repeat(10_000)} HTTP/1.1`);
      expectRawProblem(path, 414, 'uri_too_long');
      // A target just under the limit is read and judged by its route.
      const fits = await get(`GET /v1/network?unknown=${'a'.repeat(8_000)} HTTP/1.1`);
      expect(fits.status, fits.body.slice(0, 200)).toBe(200);
    });
  });

  describe('methods no route serves (RFC 9110 §9)', () => {
    it.each([
      ['an unknown method', 'FOO'],
      ['a method in lower case (methods are case-sensitive)', 'get'],
      ['TRACE', 'TRACE'],
      ['OPTIONS on a path', 'OPTIONS'],
      ['CONNECT with a path', 'CONNECT'],
    ])('answers %s on a served path with 405 and Allow', async (_what, method) => {
      const res = await get(`${method} /v1/network HTTP/1.1`);
      expectRawProblem(res, 405, 'method_not_allowed');
      expect(res.headers.allow).toBe('GET, HEAD, PATCH');
      // TRACE never echoes the request back (cross-site tracing).
      expect(res.body).not.toContain(server.apiKey);
    });

    it('answers CONNECT to an authority with 501 not_implemented: Warren is not a proxy', async () => {
      const res = await send('CONNECT other.example:443 HTTP/1.1', ['Host: other.example:443', bearer]);
      const body = expectRawProblem(res, 501, 'not_implemented');
      expect(body.detail).toContain('proxy');
      // Bytes after the CONNECT are never relayed anywhere, nor read as a request.
      const tunnel = await send('CONNECT 127.0.0.1:22 HTTP/1.1', ['Host: 127.0.0.1:22'], 'SSH-2.0-x\r\n');
      expectRawProblem(tunnel, 501, 'not_implemented');
      expect(tunnel.raw.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
    });

    it('answers an upgrade it does not serve as if none were offered, then closes', async () => {
      const res = await get('GET /v1/network HTTP/1.1', ['Connection: Upgrade', 'Upgrade: h2c']);
      expect(res.status, res.raw.slice(0, 300)).toBe(200);
      expect(JSON.parse(res.body).id).toBe(server.networkId);
      // The server closes these sockets itself (else closing the server in afterAll would hang).
    });
  });

  it('refuses a transfer coding in HTTP/1.0 as faulty framing, closing the connection (RFC 9112 §6.1)', async () => {
    const before = await keyCount();
    const key = JSON.stringify({ type: 'auth' });
    const chunked = `${key.length.toString(16)}\r\n${key}\r\n0\r\n\r\n`;
    const next = `GET /v1/keys HTTP/1.1\r\nHost: warren.test\r\n${bearer}\r\n\r\n`;
    const res = await rawSocket(
      server.url,
      `POST /v1/keys HTTP/1.0\r\nHost: warren.test\r\n${bearer}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n${chunked}${next}`,
    );
    const body = expectRawProblem(res, 400, 'invalid_request');
    expect(body.detail).toContain('HTTP/1.0');
    expect(res.raw.match(/^HTTP\/1\.1 /gm)).toHaveLength(1);
    expect(await keyCount()).toBe(before);
  });

  it.each([
    ['a NUL in a header value', 'X-Note: a\u0000b'],
    ['a bare CR in a header value', 'X-Note: a\rb'],
    ['a bare LF in a header value', 'X-Note: a\nb'],
    ['a control character in a header value', 'X-Note: a\u0001b'],
    ['DEL in a header value', 'X-Note: a\u007fb'],
    ['a separator in a header name', 'X(Note): a'],
    ['a non-ASCII header name', 'X-Nöte: a'],
    ['an empty header name', ': a'],
  ])('refuses %s with a 400 problem', async (_what, line) => {
    expectRawProblem(await get('GET /v1/network HTTP/1.1', [line]), 400, 'invalid_request');
  });

  it('refuses two Authorization or two Content-Type headers, whichever comes first (RFC 9110 §5.3)', async () => {
    const before = await keyCount();
    const other = 'Authorization: Bearer wrn_api_invalid';
    for (const pair of [
      [bearer, other],
      [other, bearer],
      [bearer, bearer.replace('Authorization', 'authorization')],
    ]) {
      const body = expectRawProblem(
        await send('GET /v1/network HTTP/1.1', ['Host: warren.test', ...pair]),
        400,
        'invalid_request',
      );
      expect(body.detail).toMatch(/more than one authorization/i);
    }
    const key = JSON.stringify({ type: 'auth' });
    const res = await send(
      'POST /v1/keys HTTP/1.1',
      [
        'Host: warren.test',
        bearer,
        'Content-Type: application/json',
        'Content-Type: text/plain',
        `Content-Length: ${key.length}`,
      ],
      key,
    );
    expectRawProblem(res, 400, 'invalid_request');
    expect(await keyCount()).toBe(before);
  });

  it('keeps serving after every refusal', async () => {
    expect((await server.call('GET', '/v1/network')).status).toBe(200);
  });
});

/**
 * Host headers as RFC 9112 §3.2 asks (none, two, or a malformed one: 400), every refusal made
 * before the pipeline as a problem with a request id, and absolute URLs built only from the
 * configured public URL, never from Host. Requests are written byte for byte on a raw socket.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../harness.js';
import { expectRawProblem, rawSocket } from './raw-http.js';

const send = (server: TestServer, lines: string[], body = '') =>
  rawSocket(server.url, `${[...lines, 'Connection: close'].join('\r\n')}\r\n\r\n${body}`);

describe('Host headers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('refuses an HTTP/1.1 request without Host with a 400 problem, and accepts HTTP/1.0 without one', async () => {
    const body = expectRawProblem(await send(server, ['GET /healthz HTTP/1.1']), 400, 'invalid_request');
    expect(body.detail).toContain('no Host header');
    // The same with a key: refused before authentication, as every malformed request is.
    expectRawProblem(
      await send(server, ['GET /v1/devices HTTP/1.1', `Authorization: Bearer ${server.apiKey}`]),
      400,
      'invalid_request',
    );
    const old = await send(server, ['GET /healthz HTTP/1.0']);
    expect(old.status).toBe(200);
  });

  it('refuses two Host headers, even when they agree', async () => {
    for (const second of ['Host: evil.example', 'host: warren.test']) {
      const body = expectRawProblem(
        await send(server, ['GET /healthz HTTP/1.1', 'Host: warren.test', second]),
        400,
        'invalid_request',
      );
      expect(body.detail).toContain('2 Host headers');
    }
  });

  it('refuses a Host that is not a host and optional port', async () => {
    for (const host of [
      'evil.example/path',
      'a b',
      'user@evil.example',
      'evil.example:80x',
      'evil.example?x',
      '[::1',
      'evil.example#',
      'ex%zzample',
      '[zz::1]',
      '[::1::2]:80',
      '[127.0.0.1]',
      'evil.example:65536',
      'evil.example:99999999999',
    ]) {
      const body = expectRawProblem(
        await send(server, ['GET /healthz HTTP/1.1', `Host: ${host}`]),
        400,
        'invalid_request',
      );
      expect(body.detail).toContain('is not a host');
    }
  });

  it('accepts every form of a valid Host', async () => {
    for (const host of [
      'warren.test',
      'warren.test:8080',
      '127.0.0.1',
      '127.0.0.1:1',
      '[::1]:8080',
      '[fe80::1%25eth0]',
      '[::ffff:127.0.0.1]',
      '[v1.future]',
      'warren.test:65535',
      'warren.test.',
      'x_y.example',
      '',
    ]) {
      const res = await send(server, ['GET /healthz HTTP/1.1', `Host: ${host}`]);
      expect(res.status, `Host: ${host}`).toBe(200);
    }
  });

  it('answers a body with a broken chunked encoding with a 400 problem', async () => {
    const res = await send(
      server,
      [
        'POST /v1/acl/validate HTTP/1.1',
        'Host: warren.test',
        `Authorization: Bearer ${server.apiKey}`,
        'Content-Type: application/hujson',
        'Transfer-Encoding: chunked',
      ],
      'zz\r\n{}\r\n0\r\n\r\n',
    );
    expectRawProblem(res, 400, 'invalid_request');
  });
});

describe('absolute URLs come from the public URL, never from Host', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ settings: { publicUrl: 'https://warren.example.com' } });
  });
  afterAll(() => server.close());

  it('builds SCIM locations and the SSO redirect URI from the public URL whatever Host says', async () => {
    for (const path of ['/scim/v2/Users', '/scim/v2/ServiceProviderConfig']) {
      const res = await send(server, [
        `GET ${path} HTTP/1.1`,
        'Host: evil.example',
        `Authorization: Bearer ${server.apiKey}`,
      ]);
      expect(res.status, res.body).toBe(200);
      expect(res.body).not.toContain('evil.example');
      expect(res.body).toContain('https://warren.example.com/scim/v2/');
    }
    const sso = await send(
      server,
      [
        'PUT /v1/network/sso HTTP/1.1',
        'Host: evil.example',
        `Authorization: Bearer ${server.apiKey}`,
        'Content-Type: application/json',
        'Content-Length: 97',
      ],
      JSON.stringify({
        issuer: 'https://idp.example.com',
        clientId: 'warren',
        clientSecret: 'a-secret-of-the-idp',
      }).padEnd(97),
    );
    expect(sso.status, sso.body).toBe(200);
    expect(JSON.parse(sso.body).redirectUri).toBe('https://warren.example.com/auth/callback');
  });
});

describe('without a public URL', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ publicUrl: false });
  });
  afterAll(() => server.close());

  it('refuses SCIM and single sign-on, changing nothing, and says how to set one', async () => {
    const users = async () => (await json(await server.call('GET', '/v1/users'))).users.length;
    const before = await users();
    const scim = await server.call('POST', '/scim/v2/Users', {
      body: { schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'], userName: 'ana@example.com' },
    });
    expect(scim.status).toBe(503);
    expect((await json(scim)).detail).toContain('WARREN_PUBLIC_URL=https://');
    expect(await users()).toBe(before);

    const sso = await server.call('PUT', '/v1/network/sso', {
      body: { issuer: 'https://idp.example.com', clientId: 'warren', clientSecret: 'a-secret-of-the-idp' },
    });
    expect(sso.status).toBe(503);
    expect((await json(sso)).detail).toContain('WARREN_PUBLIC_URL');
    expect((await server.call('GET', '/v1/network/sso')).status).toBe(404);
  });
});

/**
 * Connections that stall while sending a request are closed in time, while everyone else is
 * served; a slow but honest client is not. The limits are shortened here (the defaults are
 * 10 s for headers, 30 s for a whole request, 72 s idle between requests: http/timeouts.ts).
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from '../harness.js';

const TIMEOUTS = { headersMs: 1_000, requestMs: 2_000, keepAliveMs: 1_500, checkIntervalMs: 200 };
/** A limit plus the check interval, plus room for a loaded machine. */
const CLOSED_WITHIN = TIMEOUTS.requestMs + TIMEOUTS.checkIntervalMs + 3_000;

interface Held {
  socket: Socket;
  opened: number;
  closed: Promise<{ after: number; data: string }>;
}

function open(base: string, first: string): Promise<Held> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    const opened = Date.now();
    let data = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    const closed = new Promise<{ after: number; data: string }>((done) => {
      socket.on('close', () => done({ after: Date.now() - opened, data }));
    });
    socket.on('error', () => {});
    socket.once('connect', () => {
      if (first) socket.write(first);
      resolve({ socket, opened, closed });
    });
    socket.once('error', reject);
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('stalled requests', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer({ timeouts: TIMEOUTS });
  });
  afterAll(() => server.close());

  it('closes 200 stalled connections in time while serving normal requests', async () => {
    const head = (method: string, path: string, extra: string[] = []) =>
      [`${method} ${path} HTTP/1.1`, 'Host: warren.test', `Authorization: Bearer ${server.apiKey}`, ...extra].join(
        '\r\n',
      );
    const stalls = [
      // Connects and says nothing.
      ...Array.from({ length: 50 }, () => ''),
      // Half the headers.
      ...Array.from({ length: 50 }, () => `${head('GET', '/v1/devices')}\r\nX-Slow: `),
      // Headers announcing a body, ten bytes of it, then nothing.
      ...Array.from(
        { length: 100 },
        () =>
          `${head('POST', '/v1/acl/validate', ['Content-Type: application/hujson', 'Content-Length: 1000'])}\r\n\r\n{ "acls": `,
      ),
    ];
    const held = await Promise.all(stalls.map((first) => open(server.url, first)));

    // Meanwhile, everyone else is served.
    for (let i = 0; i < 20; i++) {
      const [health, devices] = await Promise.all([fetch(`${server.url}/healthz`), server.call('GET', '/v1/devices')]);
      expect(health.status).toBe(200);
      expect(devices.status).toBe(200);
      await sleep(50);
    }

    const results = await Promise.all(held.map((h) => h.closed));
    for (const [i, r] of results.entries()) {
      expect(r.after, `connection ${i} closed after ${r.after} ms`).toBeLessThan(CLOSED_WITHIN);
    }
    // A connection that sent nothing is closed without a word; a request that had begun is
    // told why, as a problem with a request id.
    for (const r of results.slice(0, 50)) expect(r.data).toBe('');
    for (const r of results.slice(50)) {
      expect(r.data).toMatch(/^HTTP\/1\.1 408 /);
      expect(r.data).toMatch(/content-type: application\/problem\+json/i);
      expect(r.data).toMatch(/x-request-id: req_/i);
      expect(r.data).toContain('"code":"request_timeout"');
    }
    // And the server still answers afterwards.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('closes clients that trickle without end at the limit: headers, a chunked body, a body', async () => {
    const head = (extra: string[]) =>
      ['POST /v1/acl/validate HTTP/1.1', 'Host: warren.test', `Authorization: Bearer ${server.apiKey}`, ...extra].join(
        '\r\n',
      );
    // What each keeps sending, a piece every 100 ms: never silent for long, never finished.
    const kinds = [
      { limit: TIMEOUTS.headersMs, first: `${head([])}\r\nX-Slow: `, piece: 'a' },
      { limit: TIMEOUTS.requestMs, first: `${head(['Transfer-Encoding: chunked'])}\r\n\r\n`, piece: '1\r\n \r\n' },
      { limit: TIMEOUTS.requestMs, first: `${head(['Content-Length: 100000'])}\r\n\r\n{`, piece: ' ' },
    ];
    // And a chunked body that stops halfway through a chunk.
    const stalled = `${head(['Transfer-Encoding: chunked'])}\r\n\r\n10\r\n{ "acls"`;
    const trickling = await Promise.all(
      kinds.flatMap((kind) =>
        Array.from({ length: 10 }, async () => {
          const h = await open(server.url, kind.first);
          const timer = setInterval(() => h.socket.write(kind.piece), 100);
          void h.closed.then(() => clearInterval(timer));
          return { ...kind, h };
        }),
      ),
    );
    const stalls = await Promise.all(Array.from({ length: 10 }, () => open(server.url, stalled)));

    for (let i = 0; i < 10; i++) {
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      await sleep(100);
    }
    for (const { limit, h } of trickling) {
      const { after, data } = await h.closed;
      expect(after, data.slice(0, 200)).toBeGreaterThanOrEqual(limit - 100);
      expect(after).toBeLessThan(limit + TIMEOUTS.checkIntervalMs + 3_000);
      expect(data).toMatch(/^HTTP\/1\.1 408 /);
      expect(data).toContain('"code":"request_timeout"');
    }
    for (const h of stalls) {
      const { after, data } = await h.closed;
      expect(after).toBeLessThan(CLOSED_WITHIN);
      expect(data).toMatch(/^HTTP\/1\.1 408 /);
      expect(data).toMatch(/x-request-id: req_/i);
    }
  });

  it('serves a slow but honest client that finishes within the limits', async () => {
    const body = '{ "groups": { "group:eng": ["ana@example.com"] }, "acls": [] }';
    const headers = [
      'POST /v1/acl/validate HTTP/1.1',
      'Host: warren.test',
      `Authorization: Bearer ${server.apiKey}`,
      'Content-Type: application/hujson',
      `Content-Length: ${Buffer.byteLength(body)}`,
      'Connection: close',
    ];
    const h = await open(server.url, `${headers.slice(0, 3).join('\r\n')}\r\n`);
    await sleep(300);
    h.socket.write(`${headers.slice(3).join('\r\n')}\r\n\r\n`);
    for (let i = 0; i < body.length; i += 13) {
      await sleep(250);
      h.socket.write(body.slice(i, i + 13));
    }
    const { data } = await h.closed;
    expect(data).toMatch(/^HTTP\/1\.1 200 /);
    expect(data).toContain('"valid":true');
  });

  it('closes a kept-alive connection that stays idle', async () => {
    const h = await open(server.url, 'GET /healthz HTTP/1.1\r\nHost: warren.test\r\n\r\n');
    const { after, data } = await h.closed;
    expect(data).toMatch(/^HTTP\/1\.1 200 /);
    expect(after).toBeGreaterThanOrEqual(TIMEOUTS.keepAliveMs - 100);
    expect(after).toBeLessThan(TIMEOUTS.keepAliveMs + 3_000);
  });
});

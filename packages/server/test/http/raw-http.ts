/**
 * Requests whose request line is sent exactly as written: `fetch` and URL parsing would
 * normalise `/%761/…`, `//v1/…` or `/v1/./…` before the server ever saw them.
 */
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'vitest';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** One request through node:http with a literal path (absolute form included). */
export function rawRequest(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<RawResponse> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * Writes bytes on a fresh socket and returns everything the server sends until it closes
 * (requests say `Connection: close`). The socket is not half-closed after writing: Node's
 * server drops a connection whose client has ended before a slow answer is written.
 */
export function rawSocket(base: string, bytes: string | Buffer): Promise<RawResponse & { raw: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes));
    socket.setTimeout(15_000, () => socket.destroy(new Error('the server neither answered nor closed in 15 s')));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      resolve({ ...parseResponse(raw), raw });
    });
  });
}

/** A minimal HTTP/1.1 response parser for rawSocket (Content-Length bodies only). */
function parseResponse(raw: string): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  const head = end < 0 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1] ?? 0), headers, body: end < 0 ? '' : raw.slice(end + 4) };
}

/**
 * Asserts that a raw response is the contract's problem (RFC 9457 shape, a stable `code`, the
 * request id in body and header) with this status and code; returns its body.
 */
export function expectRawProblem(res: RawResponse & { raw?: string }, status: number, code: string) {
  expect(res.status, (res.raw ?? res.body).slice(0, 400)).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(res.body);
  expect(body).toMatchObject({ type: 'about:blank', status, code });
  expect(typeof body.title).toBe('string');
  expect(typeof body.detail).toBe('string');
  expect(body.requestId).toMatch(/^req_[0-9a-f]{24}$/);
  expect(res.headers['x-request-id']).toBe(body.requestId);
  return body;
}

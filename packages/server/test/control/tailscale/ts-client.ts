/**
 * A Tailscale control client for tests, speaking what tailscaled speaks: GET /key, the
 * ts2021 upgrade with the Noise IK initiation in X-Tailscale-Handshake, then HTTP/2 over the
 * Noise channel, and map responses as 4-byte little-endian lengths and zstd frames (decoded
 * with the zstd command-line tool, an implementation independent of the server's).
 */
import { execFileSync } from 'node:child_process';
import { connect as http2Connect } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import { NoiseConn } from '../../../src/control/tailscale/noise-conn.js';
import { type X25519KeyPair, x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';
import { initiate, RESPONSE_LEN } from '../../../src/control/tailscale/noise-handshake.js';

export const nodeKey = () => `nodekey:${x25519Generate().publicKey.toString('hex')}`;

export interface ControlClient {
  post(path: string, body: unknown): Promise<{ status: number; body: Buffer }>;
  /** A map stream: its messages as they arrive, decoded. */
  stream(body: unknown): {
    messages: Array<Record<string, unknown>>;
    next(count?: number): Promise<void>;
    close(): void;
  };
  close(): void;
}

export function decodeMessages(data: Buffer): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  let at = 0;
  while (at + 4 <= data.length) {
    const size = data.readUInt32LE(at);
    if (at + 4 + size > data.length) break;
    const json = execFileSync('zstd', ['-d', '-c', '-q'], { input: data.subarray(at + 4, at + 4 + size) });
    out.push(JSON.parse(json.toString()));
    at += 4 + size;
  }
  return out;
}

export async function serverKey(url: string): Promise<Buffer> {
  const res = await fetch(`${url}/key?v=142`);
  const body = (await res.json()) as { publicKey: string };
  return Buffer.from(body.publicKey.slice('mkey:'.length), 'hex');
}

export async function controlClient(url: string, machine: X25519KeyPair = x25519Generate()): Promise<ControlClient> {
  const { hostname, port } = new URL(url);
  const server = await serverKey(url);
  const hello = initiate(machine, server, 142);
  const socket = tcpConnect(Number(port), hostname);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  socket.write(
    `POST /ts2021 HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: tailscale-control-protocol\r\nConnection: upgrade\r\n` +
      `X-Tailscale-Handshake: ${hello.initiation.toString('base64')}\r\nContent-Length: 0\r\n\r\n`,
  );
  const head = await new Promise<Buffer>((resolve, reject) => {
    let got = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      const end = got.indexOf('\r\n\r\n');
      if (end >= 0 && got.length >= end + 4 + RESPONSE_LEN) {
        socket.off('data', onData);
        resolve(got);
      }
    };
    socket.on('data', onData);
    socket.once('error', reject);
  });
  const end = head.indexOf('\r\n\r\n');
  if (!head.subarray(0, end).toString().startsWith('HTTP/1.1 101')) throw new Error(head.toString());
  const session = hello.finish(head.subarray(end + 4, end + 4 + RESPONSE_LEN));
  const conn = new NoiseConn(socket, session, head.subarray(end + 4 + RESPONSE_LEN));
  const h2 = http2Connect('http://warren', { createConnection: () => conn as never });
  h2.on('error', () => {});

  const request = (body: unknown, path: string) => {
    const req = h2.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json' });
    req.end(JSON.stringify(body));
    return req;
  };
  return {
    post: (path, body) =>
      new Promise((resolve, reject) => {
        const req = request(body, path);
        let status = 0;
        const chunks: Buffer[] = [];
        req.on('response', (headers) => {
          status = Number(headers[':status']);
        });
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => resolve({ status, body: Buffer.concat(chunks) }));
        req.on('error', reject);
      }),
    stream: (body) => {
      const req = request(body, '/machine/map');
      let data = Buffer.alloc(0);
      const messages: Array<Record<string, unknown>> = [];
      let waiter: (() => void) | undefined;
      req.on('data', (c: Buffer) => {
        data = Buffer.concat([data, c]);
        messages.length = 0;
        messages.push(...decodeMessages(data));
        waiter?.();
      });
      return {
        messages,
        next: (count = messages.length + 1) =>
          new Promise<void>((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error(`no map message ${count} within 5 s`)), 5_000);
            const check = () => {
              if (messages.length >= count) {
                clearTimeout(timer);
                waiter = undefined;
                resolve();
              }
            };
            waiter = check;
            check();
          }),
        close: () => req.close(),
      };
    },
    close: () => {
      h2.close();
      conn.destroy();
    },
  };
}

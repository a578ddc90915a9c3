/**
 * A Tailscale control client for tests, speaking what tailscaled speaks: GET /key, the
 * ts2021 upgrade with the Noise IK initiation in X-Tailscale-Handshake, then HTTP/2 over the
 * Noise channel (control-client.ts), and map responses as 4-byte little-endian lengths and
 * zstd frames (decoded with the zstd command-line tool, an implementation independent of the
 * server's).
 */
import { execFileSync } from 'node:child_process';
import { TestRunner } from 'vitest';
import { ControlChannel } from '../../../src/control/tailscale/control-client.js';
import { type X25519KeyPair, x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';

export const nodeKey = () => `nodekey:${x25519Generate().publicKey.toString('hex')}`;

/** A MapRequest as tailscaled sends it: a streamed long poll, or one answer (`stream` false). */
export const mapRequest = (nk: string, stream: boolean) => ({
  Version: 142,
  NodeKey: nk,
  DiscoKey: `discokey:${'1'.repeat(64)}`,
  Stream: stream,
  Compress: 'zstd',
  Endpoints: ['192.0.2.9:41641'],
  Hostinfo: { OS: 'linux' },
});

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
  return decodeFrames(data).decoded;
}

/** The complete frames at the start of `data`, decoded, and the bytes after them. */
function decodeFrames(data: Buffer): { decoded: Array<Record<string, unknown>>; rest: Buffer } {
  const decoded: Array<Record<string, unknown>> = [];
  let at = 0;
  while (at + 4 <= data.length) {
    const size = data.readUInt32LE(at);
    if (at + 4 + size > data.length) break;
    const json = execFileSync('zstd', ['-d', '-c', '-q'], { input: data.subarray(at + 4, at + 4 + size) });
    decoded.push(JSON.parse(json.toString()));
    at += 4 + size;
  }
  return { decoded, rest: data.subarray(at) };
}

/**
 * How long the running test has left before its own timeout, less a margin so that a wait
 * that runs out says what it waited for rather than the runner's bare "timed out".
 */
function testTimeLeft(): number {
  const test = TestRunner.getCurrentTest();
  const started = test?.result?.startTime ?? Date.now();
  const timeout = test?.timeout ?? 20_000;
  return Math.max(1_000, started + timeout - 500 - Date.now());
}

export async function serverKey(url: string): Promise<Buffer> {
  const res = await fetch(`${url}/key?v=142`);
  const body = (await res.json()) as { publicKey: string };
  return Buffer.from(body.publicKey.slice('mkey:'.length), 'hex');
}

export async function controlClient(
  url: string,
  machine: X25519KeyPair = x25519Generate(),
  transport: 'upgrade' | 'websocket' = 'upgrade',
): Promise<ControlClient> {
  const open = transport === 'websocket' ? ControlChannel.openWebSocket : ControlChannel.open;
  const channel = await open(url, await serverKey(url), machine);
  const request = (body: unknown, path: string) => channel.request(path, body);
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
      // Bytes of a frame not yet complete; whole frames are decoded once, as they complete.
      let pending: Buffer = Buffer.alloc(0);
      const messages: Array<Record<string, unknown>> = [];
      let ended: string | undefined;
      let waiter: (() => void) | undefined;
      req.on('data', (c: Buffer) => {
        pending = Buffer.concat([pending, c]);
        const { decoded, rest } = decodeFrames(pending);
        pending = rest;
        messages.push(...decoded);
        waiter?.();
      });
      const end = (why: string) => {
        ended ??= why;
        waiter?.();
      };
      req.on('close', () => end('the map stream ended'));
      req.on('error', (error: Error) => end(`the map stream failed: ${error.message}`));
      return {
        messages,
        next: (count = messages.length + 1) =>
          new Promise<void>((resolve, reject) => {
            // No fixed wait of its own, which a loaded machine outruns: the message may come as
            // late as the test's own deadline allows. A stream that ends first fails at once.
            const wait = testTimeLeft();
            const settle = (error?: Error) => {
              clearTimeout(timer);
              waiter = undefined;
              if (error) reject(error);
              else resolve();
            };
            const timer = setTimeout(
              () => settle(new Error(`no map message ${count} within ${wait} ms; got ${messages.length}`)),
              wait,
            );
            const check = () => {
              if (messages.length >= count) settle();
              else if (ended) settle(new Error(`${ended} after ${messages.length} of ${count} map messages`));
            };
            waiter = check;
            check();
          }),
        close: () => req.close(),
      };
    },
    close: () => channel.close(),
  };
}

/** Registers a new node key on `client` with an auth key, as `tailscale up --auth-key` does. */
export async function registerWithKey(
  client: ControlClient,
  authKey: string,
  hostname: string,
): Promise<{ status: number; nodeKey: string; answer: Record<string, unknown> }> {
  const nk = nodeKey();
  const res = await client.post('/machine/register', {
    NodeKey: nk,
    Auth: { AuthKey: authKey },
    Hostinfo: { Hostname: hostname, OS: 'linux', IPNVersion: '1.102.5' },
  });
  return { status: res.status, nodeKey: nk, answer: res.status === 200 ? JSON.parse(res.body.toString()) : {} };
}

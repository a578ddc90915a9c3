/**
 * A Tailscale control client for tests, speaking what tailscaled speaks: GET /key, the
 * ts2021 upgrade with the Noise IK initiation in X-Tailscale-Handshake, then HTTP/2 over the
 * Noise channel (control-client.ts), and map responses as 4-byte little-endian lengths and
 * zstd frames (decoded with the zstd command-line tool, an implementation independent of the
 * server's).
 */
import { execFileSync } from 'node:child_process';
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
  Hostinfo: { Hostname: 'x', OS: 'linux' },
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

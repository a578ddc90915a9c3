/**
 * The client side of Tailscale's control protocol, as far as a simulated device needs it:
 * GET /key, the ts2021 upgrade carrying the Noise IK initiation, HTTP/2 over the Noise channel,
 * /machine/register and a /machine/map stream decoded message by message. It is the other end
 * of ts2021.ts built from the same Noise code, for `warren node simulate --protocol tailscale`
 * and the benchmarks (exported from the package's index); a real device runs tailscaled.
 *
 * Map messages are 4-byte little-endian lengths and zstd frames (map-compression.ts). A server's
 * early Noise payload, if it sends one, is read past (early-noise.ts).
 */
import { type ClientHttp2Session, type ClientHttp2Stream, connect as http2Connect } from 'node:http2';
import { connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { createWebSocketStream, WebSocket } from 'ws';
import { decompress } from 'zstd-napi';
import { EarlyPayloadSkipper } from './early-noise.js';
import { NoiseConn } from './noise-conn.js';
import { type X25519KeyPair, x25519Generate } from './noise-crypto.js';
import { initiate, RESPONSE_LEN } from './noise-handshake.js';

/** The subprotocol (and the TCP upgrade's token) of Tailscale's control protocol. */
const UPGRADE_PROTOCOL = 'tailscale-control-protocol';

/** The capability version the simulated client claims (tailscaled v1.102's). */
export const CLIENT_VERSION = 142;

export type MapMessage = Record<string, unknown>;

/** The server's Noise public key, as `GET /key` gives it. */
export async function serverNoiseKey(url: string, signal?: AbortSignal): Promise<Buffer> {
  const res = await fetch(new URL(`/key?v=${CLIENT_VERSION}`, url), { signal });
  if (!res.ok) throw new Error(`GET /key answered ${res.status}`);
  const body = (await res.json()) as { publicKey?: string };
  if (!body.publicKey?.startsWith('mkey:')) throw new Error('GET /key gave no Noise key');
  return Buffer.from(body.publicKey.slice('mkey:'.length), 'hex');
}

/**
 * A fresh machine key. A device keeps its own for life: reconnecting with it, the server knows
 * the machine and its node key without a new registration, as with tailscaled.
 */
export const randomMachineKey = (): X25519KeyPair => x25519Generate();

/** A fresh `nodekey:…` (a simulated device never speaks WireGuard, so the private half is dropped). */
export const randomTailscaleNodeKey = () => `nodekey:${x25519Generate().publicKey.toString('hex')}`;

export interface MapStream {
  /** Resolves when the stream ends (closed by either side). */
  done: Promise<void>;
  close(): void;
}

/** One machine's control channel: a Noise session carrying HTTP/2 requests. */
export class ControlChannel {
  private constructor(
    /** What carries the Noise channel: a TCP socket, or the WebSocket's stream. */
    private readonly socket: { destroy(): unknown },
    private readonly h2: ClientHttp2Session,
  ) {}

  /** Opens the channel as `machine`, pinning `serverKey` (from serverNoiseKey). */
  static async open(
    url: string,
    serverKey: Buffer,
    machine: X25519KeyPair = x25519Generate(),
  ): Promise<ControlChannel> {
    const { hostname, port, protocol } = new URL(url);
    if (protocol !== 'http:') throw new Error('the simulated client speaks ts2021 over plain http:// only');
    const hello = initiate(machine, serverKey, CLIENT_VERSION);
    const socket = tcpConnect(Number(port || 80), hostname);
    socket.setNoDelay(true);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    socket.write(
      `POST /ts2021 HTTP/1.1\r\nHost: ${hostname}\r\nUpgrade: tailscale-control-protocol\r\nConnection: upgrade\r\n` +
        `X-Tailscale-Handshake: ${hello.initiation.toString('base64')}\r\nContent-Length: 0\r\n\r\n`,
    );
    const head = await new Promise<Buffer>((resolve, reject) => {
      let got = Buffer.alloc(0);
      const fail = (error?: Error) =>
        reject(error ?? new Error('the server closed the connection during the handshake'));
      const onData = (chunk: Buffer) => {
        got = Buffer.concat([got, chunk]);
        const end = got.indexOf('\r\n\r\n');
        if (end >= 0 && got.length >= end + 4 + RESPONSE_LEN) {
          socket.off('data', onData).off('error', fail).off('close', fail);
          resolve(got);
        }
      };
      socket.on('data', onData).once('error', fail).once('close', fail);
    });
    const end = head.indexOf('\r\n\r\n');
    const status = head.subarray(0, end).toString().split('\r\n')[0];
    if (!status.startsWith('HTTP/1.1 101')) {
      socket.destroy();
      throw new Error(`the server refused the upgrade: ${status}`);
    }
    const session = hello.finish(head.subarray(end + 4, end + 4 + RESPONSE_LEN));
    const conn = new EarlyPayloadSkipper(new NoiseConn(socket, session, head.subarray(end + 4 + RESPONSE_LEN)));
    const h2 = http2Connect('http://control', { createConnection: () => conn as never });
    h2.on('error', () => socket.destroy());
    return new ControlChannel(socket, h2);
  }

  /**
   * Opens the channel over a WebSocket instead (`GET /ts2021` with the control protocol as
   * subprotocol and the initiation in the query), as Tailscale's browser client does.
   */
  static async openWebSocket(
    url: string,
    serverKey: Buffer,
    machine: X25519KeyPair = x25519Generate(),
  ): Promise<ControlChannel> {
    const hello = initiate(machine, serverKey, CLIENT_VERSION);
    const target = new URL('/ts2021', url);
    target.protocol = target.protocol === 'https:' ? 'wss:' : 'ws:';
    target.searchParams.set('X-Tailscale-Handshake', hello.initiation.toString('base64'));
    const websocket = new WebSocket(target, UPGRADE_PROTOCOL);
    // The first binary message is the handshake's response; the stream takes every later one,
    // so it is made in the same turn: the server's first HTTP/2 frames may follow at once.
    const { response, stream } = await new Promise<{ response: Buffer; stream: Duplex }>((resolve, reject) => {
      websocket.once('message', (data: Buffer) =>
        resolve({ response: data, stream: createWebSocketStream(websocket) }),
      );
      websocket.once('error', reject);
      websocket.once('close', () => reject(new Error('the server closed the WebSocket during the handshake')));
    });
    const session = hello.finish(response.subarray(0, RESPONSE_LEN));
    const conn = new EarlyPayloadSkipper(new NoiseConn(stream, session, response.subarray(RESPONSE_LEN)));
    const h2 = http2Connect('http://control', { createConnection: () => conn as never });
    h2.on('error', () => stream.destroy());
    stream.on('error', () => h2.destroy());
    return new ControlChannel(stream, h2);
  }

  get closed(): boolean {
    return this.h2.closed || this.h2.destroyed;
  }

  /** Resolves when the channel is gone (the server closed it, or it was lost). */
  onClose(listener: () => void): void {
    this.h2.once('close', listener);
  }

  /** A POST of `body` as JSON over the channel; the raw HTTP/2 stream of its answer. */
  request(path: string, body: unknown): ClientHttp2Stream {
    const req = this.h2.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json' });
    req.end(JSON.stringify(body));
    return req;
  }

  /** POST /machine/register; the RegisterResponse (a refusal is its `Error`). */
  register(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      // The capability version goes with the request, as tailscaled sends it; servers that
      // refuse old clients (Headscale) read it here as well as in the handshake.
      const req = this.request('/machine/register', { Version: CLIENT_VERSION, ...body });
      let status = 0;
      const chunks: Buffer[] = [];
      req.on('response', (headers) => {
        status = Number(headers[':status']);
      });
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        if (status !== 200) reject(new Error(`register answered ${status}: ${text}`));
        else resolve(JSON.parse(text) as Record<string, unknown>);
      });
      req.on('error', reject);
    });
  }

  /** A streaming POST /machine/map: `onMessage` gets each message as it arrives. */
  map(body: Record<string, unknown>, onMessage: (message: MapMessage) => void): MapStream {
    const req = this.request('/machine/map', { Version: CLIENT_VERSION, Stream: true, Compress: 'zstd', ...body });
    let pending: Buffer = Buffer.alloc(0);
    const done = new Promise<void>((resolve, reject) => {
      req.on('response', (headers) => {
        const status = Number(headers[':status']);
        if (status !== 200) reject(new Error(`map answered ${status}`));
      });
      req.on('close', resolve);
      req.on('error', reject);
    });
    req.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 4) {
        const size = pending.readUInt32LE(0);
        if (pending.length < 4 + size) break;
        const frame = pending.subarray(4, 4 + size);
        pending = pending.subarray(4 + size);
        onMessage(JSON.parse(decompress(frame).toString('utf8')) as MapMessage);
      }
    });
    return { done, close: () => req.close() };
  }

  close(): void {
    this.h2.destroy();
    this.socket.destroy();
  }
}

/**
 * A DERP client over the server's HTTP upgrade, as the relay's tests drive it: raw frames, so a
 * test can also send what no honest client would.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { expect } from 'vitest';
import { encodeFrame, type Frame, FrameReader, FrameType, MAGIC } from '../../../src/control/derp/frames.js';
import { rawPublicKey, seal } from '../../../src/control/derp/nacl-box.js';
import type { TestServer } from '../../harness.js';

/** A device whose node key is enrolled in the server's network with `authKey`. */
export async function enrolledKey(server: TestServer, authKey: string): Promise<KeyObject> {
  const { privateKey } = generateKeyPairSync('x25519');
  const nodeKey = `nodekey:${rawPublicKey(privateKey).toString('hex')}`;
  const response = await server.call('POST', '/v1/node/register', {
    key: authKey,
    body: { hostname: `relay-${nodeKey.slice(8, 16)}`, os: 'linux', nodeKey },
  });
  expect(response.status).toBe(201);
  return privateKey;
}

/** A raw DERP connection: frames received so far, and whether the relay closed it. */
export class Connection {
  readonly frames: Frame[] = [];
  closed = false;
  private readonly reader = new FrameReader(1 << 20);
  private waiters: (() => void)[] = [];

  constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.frames.push(...this.reader.push(chunk));
      this.wake();
    });
    socket.on('close', () => {
      this.closed = true;
      this.wake();
    });
    socket.on('error', () => {});
  }

  static async open(server: TestServer): Promise<Connection> {
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(
      'GET /derp HTTP/1.1\r\nHost: relay\r\nUpgrade: DERP\r\nConnection: Upgrade\r\nDerp-Fast-Start: 1\r\n\r\n',
    );
    const connection = new Connection(socket);
    await connection.until((c) => c.frames.length > 0 || c.closed);
    return connection;
  }

  /** Proves `key` to the relay; resolves with the relay's public key from its key frame. */
  hello(key: KeyObject): Buffer {
    const serverKey = this.frames[0];
    if (serverKey?.type !== FrameType.serverKey) throw new Error('no server key frame');
    const relayKey = serverKey.body.subarray(MAGIC.length);
    const info = seal(Buffer.from(JSON.stringify({ version: 2 })), key, relayKey);
    this.socket.write(encodeFrame(FrameType.clientInfo, rawPublicKey(key), info));
    return relayKey;
  }

  until(done: (c: Connection) => boolean, ms = 5000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out waiting on the relay')), ms);
      const check = () => {
        if (!done(this)) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve();
      };
      this.waiters.push(check);
      check();
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

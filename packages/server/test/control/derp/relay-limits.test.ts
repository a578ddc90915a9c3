/**
 * What a relay facing the internet must bound: connections that never say hello, hellos larger
 * than any real client sends, and readers too slow for what is sent to them.
 */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { encodeFrame, FrameReader, FrameType, MAGIC } from '../../../src/control/derp/frames.js';
import { rawPublicKey, seal } from '../../../src/control/derp/nacl-box.js';
import { DerpRelay, MAX_CLIENT_INFO } from '../../../src/control/derp/relay.js';

const quiet = { info() {}, warn() {} };
let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const done of cleanup) done();
  cleanup = [];
});

async function listen(relay: DerpRelay): Promise<number> {
  const server: Server = createServer((socket) => relay.accept(socket, Buffer.alloc(0)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => {
    relay.close();
    server.close();
  });
  const address = server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/** An honest client: says hello with its key and collects what is relayed to it. */
async function client(port: number, key: KeyObject, read = true): Promise<{ socket: Socket; received: Buffer[] }> {
  const socket = connect(port, '127.0.0.1');
  cleanup.push(() => socket.destroy());
  const reader = new FrameReader(1 << 20);
  const received: Buffer[] = [];
  let greeted: () => void;
  const ready = new Promise<void>((resolve) => {
    greeted = resolve;
  });
  socket.on('data', (chunk: Buffer) => {
    for (const frame of reader.push(chunk)) {
      if (frame.type === FrameType.serverKey) {
        const relayKey = frame.body.subarray(MAGIC.length);
        socket.write(encodeFrame(FrameType.clientInfo, rawPublicKey(key), seal(Buffer.from('{}'), key, relayKey)));
      }
      if (frame.type === FrameType.serverInfo) {
        greeted();
        if (!read) socket.pause(); // from now on, read nothing
      }
      if (frame.type === FrameType.recvPacket) received.push(frame.body.subarray(32));
    }
  });
  await ready;
  return { socket, received };
}

describe('relay limits', () => {
  it('closes 500 connections that never say hello, while honest clients are relayed', async () => {
    const relay = new DerpRelay({
      privateKey: Buffer.alloc(32, 9),
      admit: async () => true,
      log: quiet,
      handshakeTimeoutMs: 500,
    });
    const port = await listen(relay);
    const idle = Array.from({ length: 500 }, () => connect(port, '127.0.0.1'));
    const closed = Promise.all(idle.map((socket) => new Promise((resolve) => socket.on('close', resolve))));
    for (const socket of idle) {
      socket.on('error', () => {});
      socket.resume(); // discard the relay's greeting, so its hang-up is seen
    }

    const [aliceKey, bobKey] = [generateKeyPairSync('x25519').privateKey, generateKeyPairSync('x25519').privateKey];
    const alice = await client(port, aliceKey);
    const bob = await client(port, bobKey);
    alice.socket.write(encodeFrame(FrameType.sendPacket, rawPublicKey(bobKey), Buffer.from('through the crowd')));
    await expect.poll(() => bob.received.map(String)).toEqual(['through the crowd']);

    const started = Date.now();
    await closed;
    expect(Date.now() - started).toBeLessThan(5000);
    expect(relay.stats.clients).toBe(2);
  });

  it('closes a connection whose hello announces more than a client sends, before reading it', async () => {
    const relay = new DerpRelay({
      privateKey: Buffer.alloc(32, 5),
      admit: async () => true,
      log: quiet,
      handshakeTimeoutMs: 60_000, // the limit, not the timeout, must end it
    });
    const port = await listen(relay);
    const socket = connect(port, '127.0.0.1');
    cleanup.push(() => socket.destroy());
    socket.on('error', () => {});
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const reader = new FrameReader(1 << 20);
    const greeted = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        if (reader.push(chunk).some((frame) => frame.type === FrameType.serverKey)) resolve();
      }),
    );
    await greeted;
    // The header of a 256 KiB ClientInfo (what Tailscale's relays would still take) and only the
    // first bytes of its body: the relay must hang up without waiting for the rest.
    const header = Buffer.alloc(5);
    header[0] = FrameType.clientInfo;
    header.writeUInt32BE(256 << 10, 1);
    socket.write(Buffer.concat([header, Buffer.alloc(64)]));
    await closed;
    expect(socket.destroyed).toBe(true);
    expect(relay.stats.clients).toBe(0);
  });

  it('still admits a hello as large as a client with every optional field sends', async () => {
    const relay = new DerpRelay({ privateKey: Buffer.alloc(32, 6), admit: async () => true, log: quiet });
    const port = await listen(relay);
    const key = generateKeyPairSync('x25519').privateKey;
    const info = JSON.stringify({
      meshKey: 'a'.repeat(64),
      version: 2,
      CanAckPings: true,
      IsProber: true,
      AppName: 'x'.repeat(1000),
    });
    const socket = connect(port, '127.0.0.1');
    cleanup.push(() => socket.destroy());
    const reader = new FrameReader(1 << 20);
    const sent: number[] = [];
    const admitted = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        for (const frame of reader.push(chunk)) {
          if (frame.type === FrameType.serverKey) {
            const hello = encodeFrame(
              FrameType.clientInfo,
              rawPublicKey(key),
              seal(Buffer.from(info), key, frame.body.subarray(MAGIC.length)),
            );
            sent.push(hello.length - 5);
            socket.write(hello);
          }
          if (frame.type === FrameType.serverInfo) resolve();
        }
      }),
    );
    await admitted;
    expect(sent[0]).toBeLessThan(MAX_CLIENT_INFO);
    expect(relay.stats.clients).toBe(1);
  });

  it('drops packets for a reader that does not keep up instead of buffering them', async () => {
    const limit = 256 << 10;
    const relay = new DerpRelay({
      privateKey: Buffer.alloc(32, 3),
      admit: async () => true,
      log: quiet,
      maxQueuedBytes: limit,
    });
    const port = await listen(relay);
    const [fastKey, slowKey] = [generateKeyPairSync('x25519').privateKey, generateKeyPairSync('x25519').privateKey];
    const fast = await client(port, fastKey);
    await client(port, slowKey, false);
    const packet = encodeFrame(FrameType.sendPacket, rawPublicKey(slowKey), Buffer.alloc(60_000));
    for (let i = 0; i < 200; i++) fast.socket.write(packet); // 12 MB toward a reader that reads nothing
    await expect.poll(() => relay.stats.packetsDropped, { timeout: 10_000 }).toBeGreaterThan(100);
    expect(relay.stats.packetsRelayed).toBeLessThan(100);
  });
});

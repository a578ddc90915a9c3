/**
 * The Noise connection as the stream Node's HTTP/2 runs on (noise-conn.ts): what Node's wrapper
 * for a stream that is not a socket (JSStreamSocket) relies on, so that any lighter stream put
 * there keeps it. Reading pauses while a write is out and resumes after it, without losing or
 * reordering a record; a batch of chunks completes only once the carrier took its records; a
 * failed or destroyed connection fails what it had not sent; and HTTP/2 itself, with bodies
 * many records and flow-control windows long both ways, over two real sockets.
 */
import { EventEmitter, once } from 'node:events';
import { connect as h2connect, performServerHandshake } from 'node:http2';
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import type { Duplex } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { type Carrier, MAX_PLAINTEXT, NoiseConn } from '../../../src/control/tailscale/noise-conn.js';
import { x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';
import { initiate, respond } from '../../../src/control/tailscale/noise-handshake.js';
import { connectedPair, readN } from './noise-pair.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A carrier that records each write and holds its callback until the test releases it. */
function heldCarrier() {
  const writes: { chunk: Buffer; done: (error?: Error | null) => void }[] = [];
  const calls = { end: 0, destroy: 0 };
  const carrier: Carrier = {
    write: (chunk, done) => {
      writes.push({ chunk, done });
    },
    end: () => {
      calls.end++;
    },
    destroy: () => {
      calls.destroy++;
    },
    on: () => undefined,
  };
  return { carrier, writes, calls };
}

function keys() {
  const server = x25519Generate();
  const client = initiate(x25519Generate(), server.publicKey, 142);
  const answer = respond(server, client.initiation);
  return { server: answer.session, client: client.finish(answer.response) };
}

describe('reading', () => {
  it('holds what arrives while paused and gives it, in order and not from inside resume, after', async () => {
    const { serverConn, clientConn } = connectedPair();
    const got: string[] = [];
    serverConn.on('data', (chunk: Buffer) => got.push(chunk.toString()));
    serverConn.pause();
    clientConn.write(Buffer.from('one'));
    clientConn.write(Buffer.from('two'));
    await tick();
    expect(got).toEqual([]);
    serverConn.resume();
    // HTTP/2 resumes from inside its write's completion: handing it data there would enter it again.
    expect(got).toEqual([]);
    // A record arriving before the held ones are given goes after them.
    clientConn.write(Buffer.from('three'));
    await tick();
    expect(got).toEqual(['one', 'two', 'three']);
  });

  it('ends only after what it held, when the carrier ends while paused', async () => {
    const k = keys();
    const { carrier, writes } = heldCarrier();
    const sender = new NoiseConn(carrier, k.client);
    // A carrier that ends without closing (a socket half-closed by its peer).
    const incoming = new EventEmitter();
    const receiver = new NoiseConn({ ...heldCarrier().carrier, on: incoming.on.bind(incoming) as never }, k.server);
    const events: string[] = [];
    receiver.on('data', (chunk: Buffer) => events.push(chunk.toString()));
    const ended = new Promise((resolve) => receiver.on('end', resolve)).then(() => events.push('end'));
    receiver.pause();
    sender.write(Buffer.from('last'));
    incoming.emit('data', writes[0].chunk);
    incoming.emit('end');
    await tick();
    expect(events).toEqual([]);
    receiver.resume();
    await ended;
    expect(events).toEqual(['last', 'end']);
  });

  it('gives a listener added late what arrived before it', async () => {
    const { serverConn, clientConn } = connectedPair();
    clientConn.write(Buffer.from('early'));
    await tick();
    expect((await readN(serverConn, 5)).toString()).toBe('early');
  });
});

describe('writing', () => {
  it("runs a corked batch's callbacks once each, only after the carrier took its one write", async () => {
    const { carrier, writes } = heldCarrier();
    const conn = new NoiseConn(carrier, keys().client);
    const done: number[] = [];
    conn.cork();
    for (let i = 0; i < 100; i++) expect(conn.write(Buffer.alloc(100, i), () => done.push(i))).toBe(true);
    conn.uncork();
    // 10,000 bytes: three records (two full, one of 1,846 bytes) in one carrier write.
    expect(writes).toHaveLength(1);
    expect(writes[0].chunk.length).toBe(10_000 + 3 * (3 + 16));
    expect(writes[0].chunk.readUInt16BE(MAX_PLAINTEXT + 19 + 1)).toBe(MAX_PLAINTEXT + 16);
    await tick();
    expect(done).toEqual([]);
    writes[0].done();
    expect(done).toEqual([...Array(100).keys()]);
  });

  it('seals a batch of exactly two records as two, with no empty third', () => {
    const { carrier, writes } = heldCarrier();
    const conn = new NoiseConn(carrier, keys().client);
    conn.cork();
    conn.write(Buffer.alloc(MAX_PLAINTEXT, 1));
    conn.write(Buffer.alloc(MAX_PLAINTEXT, 2));
    conn.uncork();
    expect(writes.map((w) => w.chunk.length)).toEqual([2 * (MAX_PLAINTEXT + 19)]);
  });

  it("fails the batch's callbacks with the carrier's error and ends the connection with it", async () => {
    const { carrier, writes, calls } = heldCarrier();
    const conn = new NoiseConn(carrier, keys().client);
    const results: unknown[] = [];
    const failed = once(conn, 'error');
    const closed = new Promise((resolve) => conn.once('close', resolve));
    conn.cork();
    conn.write(Buffer.from('a'), (error) => results.push(error));
    conn.write(Buffer.from('b'), (error) => results.push(error));
    conn.uncork();
    const broken = new Error('EPIPE');
    writes[0].done(broken);
    expect(results).toEqual([broken, broken]);
    expect((await failed)[0]).toBe(broken);
    await closed;
    expect(conn.destroyed).toBe(true);
    expect(calls.destroy).toBe(1);
    // Later writes fail at once and reach nothing.
    const late = new Promise((resolve) => expect(conn.write(Buffer.from('c'), resolve)).toBe(false));
    expect(await late).toBeInstanceOf(Error);
    expect(writes).toHaveLength(1);
  });

  it('destroyed with a batch still corked: nothing reaches the carrier and the batch fails', async () => {
    const { carrier, writes, calls } = heldCarrier();
    const conn = new NoiseConn(carrier, keys().client);
    const results: unknown[] = [];
    const closed = once(conn, 'close');
    conn.cork();
    conn.write(Buffer.from('a'), (error) => results.push(error));
    conn.destroy();
    conn.uncork();
    await closed;
    expect(writes).toHaveLength(0);
    expect(calls.destroy).toBe(1);
    expect(results).toHaveLength(1);
    expect(results[0]).toBeInstanceOf(Error);
  });

  it('end sends what was corked, ends the carrier once that was taken, and refuses later writes', async () => {
    const { carrier, writes, calls } = heldCarrier();
    const conn = new NoiseConn(carrier, keys().client);
    conn.on('error', () => {});
    conn.cork();
    conn.write(Buffer.from('bye'));
    const ended = new Promise((resolve) => conn.end(() => resolve(calls.end)));
    expect(writes).toHaveLength(1);
    writes[0].done();
    expect(await ended).toBe(1);
    const late = new Promise((resolve) => conn.write(Buffer.from('more'), resolve));
    expect(await late).toBeInstanceOf(Error);
    expect(writes).toHaveLength(1);
  });
});

describe('HTTP/2 over it', () => {
  const open: { destroy(): unknown }[] = [];
  afterEach(() => {
    for (const thing of open.splice(0)) thing.destroy();
  });

  it('carries bodies many records and flow-control windows long, both ways, on several streams', async () => {
    const { server: serverKeys, client: clientKeys } = keys();
    const listener = createServer((socket) => {
      open.push(socket);
      const conn = new NoiseConn(socket, serverKeys);
      const session = performServerHandshake(conn as unknown as Duplex);
      session.on('error', () => conn.destroy());
      session.on('stream', (stream) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          // The body back, reversed, in writes of uneven sizes.
          const body = Buffer.concat(chunks).reverse();
          stream.respond({ ':status': 200 });
          for (let at = 0; at < body.length; at += 7_001) stream.write(body.subarray(at, at + 7_001));
          stream.end();
        });
      });
    });
    open.push({ destroy: () => listener.close() });
    await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
    const socket: Socket = tcpConnect((listener.address() as { port: number }).port, '127.0.0.1');
    open.push(socket);
    await once(socket, 'connect');
    const conn = new NoiseConn(socket, clientKeys);
    const h2 = h2connect('http://control', { createConnection: () => conn as unknown as Duplex });
    open.push(h2);
    const exchange = (body: Buffer) =>
      new Promise<Buffer>((resolve, reject) => {
        const req = h2.request({ ':method': 'POST', ':path': '/echo' });
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => resolve(Buffer.concat(chunks)));
        req.on('error', reject);
        req.end(body);
      });
    // 300 kB each: past HTTP/2's 64 KiB initial windows, so both sides pause and resume reading.
    const bodies = [1, 2, 3].map((seed) => Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * seed) % 251)));
    const answers = await Promise.all(bodies.map(exchange));
    for (const [i, body] of bodies.entries()) expect(answers[i].equals(Buffer.from(body).reverse())).toBe(true);
  });
});

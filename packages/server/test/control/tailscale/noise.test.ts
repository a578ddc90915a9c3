/**
 * The Noise IK handshake and record framing of Tailscale's control protocol, checked against
 * a handshake initiation recorded from Tailscale's own client code (v1.102.5's
 * controlbase.ClientDeferred, with fixed machine and server keys), and in both directions
 * between this implementation's initiator and responder.
 */
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { MAX_PLAINTEXT, NoiseConn } from '../../../src/control/tailscale/noise-conn.js';
import { x25519Generate, x25519Private } from '../../../src/control/tailscale/noise-crypto.js';
import { errorFrame, HandshakeError, initiate, respond } from '../../../src/control/tailscale/noise-handshake.js';
import { carrier, connectedPair, readN } from './noise-pair.js';

const recorded = JSON.parse(readFileSync(new URL('./fixtures/initiation-v1.102.5.json', import.meta.url), 'utf8')) as {
  serverPrivate: string;
  serverPublic: string;
  machinePublic: string;
  version: number;
  initiation: string;
};
const hex = (text: string) => Buffer.from(text.replace(/^mkey:/, ''), 'hex');

describe('Noise IK handshake', () => {
  const server = x25519Private(hex(recorded.serverPrivate));

  it('derives the server public key Tailscale derives from the same private key', () => {
    expect(server.publicKey.toString('hex')).toBe(hex(recorded.serverPublic).toString('hex'));
  });

  it("answers the real client's initiation and learns its machine key", () => {
    const { response, session } = respond(server, hex(recorded.initiation));
    expect(session.version).toBe(recorded.version);
    expect(session.peerStatic.toString('hex')).toBe(hex(recorded.machinePublic).toString('hex'));
    expect(response.length).toBe(51);
    expect(response[0]).toBe(2);
    expect(response.readUInt16BE(1)).toBe(48);
  });

  it('refuses an initiation changed in any byte of its encrypted part', () => {
    const init = hex(recorded.initiation);
    for (const at of [5, 40, 90, 100]) {
      const bad = Buffer.from(init);
      bad[at] ^= 1;
      expect(() => respond(server, bad)).toThrow(HandshakeError);
    }
    const otherServer = x25519Generate();
    expect(() => respond(otherServer, init)).toThrow(HandshakeError);
  });

  it('refuses initiations of the wrong size or type', () => {
    expect(() => respond(server, Buffer.alloc(100))).toThrow('wrong handshake initiation size');
    const wrongType = hex(recorded.initiation);
    wrongType[2] = 4;
    expect(() => respond(server, wrongType)).toThrow('unexpected handshake message type');
  });

  it('agrees on the transport keys with an initiator, each direction its own key', () => {
    const machine = x25519Generate();
    const client = initiate(machine, server.publicKey, 142);
    const { response, session } = respond(server, client.initiation);
    const clientSession = client.finish(response);
    expect(session.peerStatic.equals(machine.publicKey)).toBe(true);
    expect(clientSession.txKey.equals(session.rxKey)).toBe(true);
    expect(clientSession.rxKey.equals(session.txKey)).toBe(true);
    expect(clientSession.txKey.equals(clientSession.rxKey)).toBe(false);
    expect(clientSession.handshakeHash.equals(session.handshakeHash)).toBe(true);
  });

  it('frames a refusal as an error message the client prints', () => {
    const frame = errorFrame('no');
    expect([...frame]).toEqual([3, 0, 2, 0x6e, 0x6f]);
  });
});

/** V8's full collection, without starting the test process with --expose-gc. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('Noise records', () => {
  it('does not keep the bytes read past the handshake once it has taken them in', async () => {
    // They come with the upgrade request (the client's first records); a connection lasts as
    // long as its device is connected, so keeping them cost a buffer per connected device.
    const gc = collector();
    const server = x25519Generate();
    const client = initiate(x25519Generate(), server.publicKey, 142);
    const answer = respond(server, client.initiation);
    const sealed: Buffer[] = [];
    const clientConn = new NoiseConn(
      {
        write: (c, cb) => {
          sealed.push(c);
          cb();
        },
        end: () => {},
        destroy: () => {},
        on: () => undefined,
      },
      client.finish(answer.response),
    );
    clientConn.write(Buffer.from('first request'));
    await new Promise((resolve) => setImmediate(resolve));
    // Its own allocation, as the upgrade's head is, not a slice of a shared pool.
    let leftover: Buffer | undefined = Buffer.alloc(Buffer.concat(sealed).length);
    Buffer.concat(sealed).copy(leftover);
    const held = new WeakRef(leftover);
    const socket = new PassThrough();
    const serverConn = new NoiseConn(carrier(socket, socket), answer.session, leftover);
    leftover = undefined;
    expect((await readN(serverConn, 13)).toString()).toBe('first request');
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    // Still open and listening to its carrier, and no longer holding the bytes.
    expect(serverConn.destroyed).toBe(false);
    expect(held.deref()).toBeUndefined();
  });

  it('a connection keeps its transport keys and nothing else of the handshake', () => {
    // It lasts as long as its device is connected: what it keeps is held once per device.
    const { serverConn, session } = connectedPair();
    const kept = new Set(Object.values(serverConn));
    expect(kept.has(session.txKey) && kept.has(session.rxKey)).toBe(true);
    expect(kept.has(session)).toBe(false);
    expect(kept.has(session.peerStatic)).toBe(false);
    expect(kept.has(session.handshakeHash)).toBe(false);
  });

  it('carries data both ways, splitting what exceeds one record', async () => {
    const { serverConn, clientConn, wire } = connectedPair();
    const big = Buffer.alloc(MAX_PLAINTEXT * 2 + 10, 7);
    const atServer = readN(serverConn, big.length);
    clientConn.write(big);
    expect((await atServer).equals(big)).toBe(true);
    // Three records: type 4, a length of at most 4093, never the plaintext itself.
    const sent = Buffer.concat(wire);
    expect(sent[0]).toBe(4);
    expect(sent.readUInt16BE(1)).toBe(MAX_PLAINTEXT + 16);
    expect(sent.length).toBe(big.length + 3 * (3 + 16));
    expect(sent.includes(Buffer.alloc(64, 7))).toBe(false);
    const atClient = readN(clientConn, 5);
    serverConn.write(Buffer.from('hello'));
    expect((await atClient).toString()).toBe('hello');
  });

  it('seals the chunks of one corked write as the fewest records, in one carrier write', async () => {
    // HTTP/2 writes a DATA frame's header and payload as two chunks of one corked write.
    const { serverConn, clientConn, wire } = connectedPair();
    const chunks = [Buffer.alloc(9, 1), Buffer.alloc(MAX_PLAINTEXT, 2), Buffer.alloc(300, 3)];
    const whole = Buffer.concat(chunks);
    const atServer = readN(serverConn, whole.length);
    const writes = wire.length;
    clientConn.cork();
    for (const chunk of chunks) clientConn.write(chunk);
    clientConn.uncork();
    expect((await atServer).equals(whole)).toBe(true);
    const sent = wire.slice(writes);
    expect(sent).toHaveLength(1);
    // Two records (the plaintext exceeds one by 309 bytes), each with its own nonce: sealed
    // with a reused nonce the server could not open them.
    expect(sent[0].length).toBe(whole.length + 2 * (3 + 16));
    expect(sent[0].readUInt16BE(1)).toBe(MAX_PLAINTEXT + 16);
    // And the records after it still authenticate.
    const more = readN(serverConn, 5);
    clientConn.write(Buffer.from('again'));
    expect((await more).toString()).toBe('again');
  });

  it('ends the connection on a record that does not authenticate', async () => {
    const { serverConn, toServer } = connectedPair();
    const failed = new Promise<Error>((resolve) => serverConn.on('error', resolve));
    toServer.write(Buffer.from([4, 0, 20, ...Buffer.alloc(20)]));
    expect((await failed).message).toBe('a Noise record did not authenticate');
  });
});

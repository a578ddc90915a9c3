/**
 * The transport of a finished Noise handshake as a Duplex stream, so HTTP/2 runs over it.
 * Each record is type 4, a u16 BE length and the ciphertext; a record is at most 4096 bytes
 * whole, so at most 4077 plaintext bytes (Tailscale's controlbase). Nonces count up from 0
 * per direction; a record that does not authenticate ends the connection.
 *
 * HTTP/2 hands a message over as several chunks in one corked write (a DATA frame's 9-byte
 * header, then its payload, often a WINDOW_UPDATE or PING ack beside them): they are sealed as
 * the fewest records that hold them and go to the carrier as one buffer, one socket write per
 * message rather than a record, a seal and a write per chunk. A fan-out to every stream of a
 * fleet is mostly this, once per connection.
 */
import { Duplex } from 'node:stream';
import { nonceOf, open, sealParts, TAG_LEN } from './noise-crypto.js';
import { MSG_RECORD, type Session } from './noise-handshake.js';

const HEADER = 3;
/** What `pending` is between records, rather than an empty view that would keep the last chunk. */
const NOTHING = Buffer.alloc(0);
export const MAX_RECORD = 4096;
export const MAX_PLAINTEXT = MAX_RECORD - HEADER - TAG_LEN;

/** The byte stream a Noise connection runs on: a socket, or a WebSocket's binary messages. */
export interface Carrier {
  write(chunk: Buffer, callback: (error?: Error | null) => void): void;
  end(): void;
  destroy(error?: Error): void;
  on(event: 'data', listener: (chunk: Buffer) => void): unknown;
  on(event: 'end' | 'close', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

export class NoiseConn extends Duplex {
  private txNonce = 0n;
  private rxNonce = 0n;
  private pending: Buffer = NOTHING;
  /** The nonce of the next record, rewritten in place (the cipher copies it). */
  private readonly txNonceBytes = Buffer.alloc(12);
  private readonly rxNonceBytes = Buffer.alloc(12);
  private readonly txKey: Buffer;
  private readonly rxKey: Buffer;

  constructor(
    private readonly carrier: Carrier,
    session: Pick<Session, 'txKey' | 'rxKey'>,
    /** Bytes the carrier already read past the handshake. */
    leftover?: Buffer,
  ) {
    super();
    // Only the transport keys: a connection lasts as long as its device is connected, and the
    // rest of the handshake's result (the peer's key, the handshake hash) is not needed past it.
    this.txKey = session.txKey;
    this.rxKey = session.rxKey;
    carrier.on('data', (chunk) => this.receive(chunk));
    carrier.on('end', () => this.push(null));
    carrier.on('close', () => this.destroy());
    carrier.on('error', (error) => this.destroy(error));
    // Bound rather than closed over: an arrow here would put `leftover` in the context the
    // listeners above share, and keep it for as long as the connection lasts.
    if (leftover && leftover.length > 0) queueMicrotask(this.receive.bind(this, leftover));
  }

  /** Encrypts plaintext into records of at most MAX_RECORD bytes, as one buffer. */
  private records(plaintext: Buffer): Buffer {
    const count = Math.ceil(plaintext.length / MAX_PLAINTEXT);
    // The records' headers share one allocation; the whole is copied once, by the concat.
    const headers = Buffer.allocUnsafe(HEADER * count);
    const out: Buffer[] = [];
    for (let at = 0, i = 0; at < plaintext.length; at += MAX_PLAINTEXT, i++) {
      const part = plaintext.subarray(at, at + MAX_PLAINTEXT);
      const header = headers.subarray(i * HEADER, (i + 1) * HEADER);
      header[0] = MSG_RECORD;
      header.writeUInt16BE(part.length + TAG_LEN, 1);
      out.push(header, ...sealParts(this.txKey, nonceOf(this.txNonce++, this.txNonceBytes), part));
    }
    return Buffer.concat(out);
  }

  private receive(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= HEADER) {
      const length = this.pending.readUInt16BE(1);
      if (this.pending[0] !== MSG_RECORD || HEADER + length > MAX_RECORD) {
        this.fail('unexpected Noise message');
        return;
      }
      if (this.pending.length < HEADER + length) return;
      const ciphertext = this.pending.subarray(HEADER, HEADER + length);
      this.pending = this.pending.length === HEADER + length ? NOTHING : this.pending.subarray(HEADER + length);
      const plaintext = open(this.rxKey, nonceOf(this.rxNonce++, this.rxNonceBytes), ciphertext);
      if (!plaintext) {
        this.fail('a Noise record did not authenticate');
        return;
      }
      this.push(plaintext);
    }
  }

  private fail(reason: string): void {
    const error = new Error(reason);
    this.carrier.destroy(error);
    this.destroy(error);
  }

  override _read(): void {
    // Records are pushed as they arrive; the carrier has no backpressure of its own here.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.carrier.write(this.records(chunk), callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    const plaintext = chunks.length === 1 ? chunks[0].chunk : Buffer.concat(chunks.map((c) => c.chunk));
    this.carrier.write(this.records(plaintext), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.carrier.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.carrier.destroy();
    callback(error);
  }
}

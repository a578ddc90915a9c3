/**
 * The client side of Tailscale's early Noise payload. A control server may write one message
 * on a fresh Noise channel before HTTP/2 starts (tailcfg.EarlyNoise: a node-key challenge):
 * the 5 bytes `\xff\xff\xffTS`, which no HTTP/2 frame starts with, a u32 big-endian length and
 * that much JSON. tailscaled reads past it; so does this stream, so HTTP/2 sees only its own
 * frames whether the server sends the payload (Headscale, Tailscale's own) or not (Warren).
 */
import { Duplex } from 'node:stream';

const MAGIC = Buffer.from('\xff\xff\xffTS', 'latin1');
const HEADER = MAGIC.length + 4;
/** The payload is a small JSON object; anything near this bound is not one. */
const MAX_PAYLOAD = 64 * 1024;

export class EarlyPayloadSkipper extends Duplex {
  /** What arrived before it was known whether a payload leads; undefined once that is settled. */
  private head: Buffer | undefined = Buffer.alloc(0);

  constructor(private readonly inner: Duplex) {
    super();
    inner.on('data', (chunk: Buffer) => this.receive(chunk));
    inner.on('end', () => this.push(null));
    inner.on('close', () => this.destroy());
    inner.on('error', (error) => this.destroy(error));
  }

  private receive(chunk: Buffer): void {
    if (this.head === undefined) {
      this.push(chunk);
      return;
    }
    const head = this.head.length === 0 ? chunk : Buffer.concat([this.head, chunk]);
    const known = Math.min(head.length, MAGIC.length);
    if (!head.subarray(0, known).equals(MAGIC.subarray(0, known))) {
      this.head = undefined;
      this.push(head);
      return;
    }
    this.head = head;
    if (head.length < HEADER) return;
    const length = head.readUInt32BE(MAGIC.length);
    if (length > MAX_PAYLOAD) {
      this.destroy(new Error(`an early Noise payload of ${length} bytes`));
      return;
    }
    if (head.length < HEADER + length) return;
    this.head = undefined;
    if (head.length > HEADER + length) this.push(head.subarray(HEADER + length));
  }

  override _read(): void {
    // The inner stream pushes as records arrive (flowing), as the Noise connection does.
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.inner.write(chunk, callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.inner.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.inner.destroy(error ?? undefined);
    callback(error);
  }
}

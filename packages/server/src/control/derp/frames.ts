/**
 * DERP framing (Tailscale's `derp` package, protocol version 2): every frame is a one-byte type,
 * a big-endian uint32 length and that many bytes. The reader takes the bytes a socket delivers in
 * whatever pieces they arrive and hands out whole frames, refusing any frame longer than the
 * limit of the connection's current stage before buffering it.
 */

export const PROTOCOL_VERSION = 2;
/** "DERP🔑", the first eight bytes of the server's key frame. */
export const MAGIC = Buffer.from('DERP🔑', 'utf8');
export const FRAME_HEADER_LENGTH = 5;
/** The largest packet a client may relay (bytes visible to the sender, as in Tailscale). */
export const MAX_PACKET_SIZE = 64 << 10;

export const FrameType = {
  serverKey: 0x01,
  clientInfo: 0x02,
  serverInfo: 0x03,
  sendPacket: 0x04,
  recvPacket: 0x05,
  keepAlive: 0x06,
  notePreferred: 0x07,
  peerGone: 0x08,
  peerPresent: 0x09,
  forwardPacket: 0x0a,
  watchConns: 0x10,
  closePeer: 0x11,
  ping: 0x12,
  pong: 0x13,
  health: 0x14,
  restarting: 0x15,
} as const;

export const PeerGoneReason = { disconnected: 0x00, notHere: 0x01 } as const;

export interface Frame {
  type: number;
  body: Buffer;
}

export function encodeFrame(type: number, ...parts: Uint8Array[]): Buffer {
  const length = parts.reduce((sum, part) => sum + part.length, 0);
  const header = Buffer.allocUnsafe(FRAME_HEADER_LENGTH);
  header[0] = type;
  header.writeUInt32BE(length, 1);
  return Buffer.concat([header, ...parts], FRAME_HEADER_LENGTH + length);
}

export class FrameTooLargeError extends Error {
  constructor(
    readonly type: number,
    readonly length: number,
    readonly limit: number,
  ) {
    super(`frame of type 0x${type.toString(16)} is ${length} bytes, more than the ${limit} allowed`);
  }
}

/**
 * Whole frames out of a byte stream; `limit` may be changed between stages of a connection.
 * Pieces are kept as they arrive and joined only once a frame is complete, so a peer that drips
 * a large frame a byte at a time costs linear, not quadratic, copying.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private total = 0;
  /** Bytes the first incomplete frame needs, header included, once its header is known. */
  private needed: number | undefined;

  constructor(public limit: number) {}

  /** Appends bytes and returns the frames they complete (throws FrameTooLargeError). */
  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.total += chunk.length;
    if (!this.frameReady()) return [];
    const data = this.joined();
    const frames: Frame[] = [];
    let offset = 0;
    while (this.needed !== undefined && data.length - offset >= this.needed) {
      frames.push({
        type: data[offset] as number,
        body: data.subarray(offset + FRAME_HEADER_LENGTH, offset + this.needed),
      });
      offset += this.needed;
      this.needed = undefined;
      if (data.length - offset >= FRAME_HEADER_LENGTH) this.needed = this.sizeOf(data, offset);
    }
    // The incomplete tail is copied once, so delivered frames and what follows them do not pin
    // each other's memory.
    const rest = data.subarray(offset);
    this.chunks = rest.length > 0 ? [Buffer.from(rest)] : [];
    this.total = rest.length;
    return frames;
  }

  /** Whether the first frame is complete (reading its header once enough bytes are in). */
  private frameReady(): boolean {
    if (this.needed === undefined) {
      if (this.total < FRAME_HEADER_LENGTH) return false;
      this.needed = this.sizeOf(this.joined(), 0);
    }
    return this.total >= this.needed;
  }

  /** The whole size of the frame whose header starts at `offset`, refused past the limit. */
  private sizeOf(data: Buffer, offset: number): number {
    const length = data.readUInt32BE(offset + 1);
    if (length > this.limit) throw new FrameTooLargeError(data[offset] as number, length, this.limit);
    return FRAME_HEADER_LENGTH + length;
  }

  /** Bytes received that do not yet make a whole frame. */
  get buffered(): number {
    return this.total;
  }

  private joined(): Buffer {
    if (this.chunks.length > 1) this.chunks = [Buffer.concat(this.chunks, this.total)];
    return this.chunks[0] as Buffer;
  }
}

/**
 * Map responses in zstd frames. Tailscale clients decode every map message as zstd (its
 * MapRequest always asks for `Compress: "zstd"`), and Node 20 has no zstd encoder, so each
 * message is written as a standard frame (RFC 8878) of raw blocks: valid zstd any decoder
 * reads, without compression. The messages travel inside the encrypted Noise channel, so
 * compressing them would only save bandwidth.
 */
const MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);
/** Single segment, 4-byte content size, no checksum, no dictionary. */
const DESCRIPTOR = 0xa0;
/** Block_Maximum_Size: 128 KiB. */
const MAX_BLOCK = 128 * 1024;
const RAW_BLOCK = 0;

export function zstdFrame(content: Buffer): Buffer {
  const parts: Buffer[] = [MAGIC];
  const header = Buffer.alloc(5);
  header[0] = DESCRIPTOR;
  header.writeUInt32LE(content.length, 1);
  parts.push(header);
  let at = 0;
  do {
    const size = Math.min(MAX_BLOCK, content.length - at);
    const last = at + size >= content.length ? 1 : 0;
    const block = Buffer.alloc(3);
    block.writeUIntLE((size << 3) | (RAW_BLOCK << 1) | last, 0, 3);
    parts.push(block, content.subarray(at, at + size));
    at += size;
  } while (at < content.length);
  return Buffer.concat(parts);
}

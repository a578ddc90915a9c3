/**
 * Decompression of zstd bodies (flow log uploads: logtail sends `Content-Encoding: zstd`),
 * bounded before any byte is decoded. The frames are walked first (RFC 8878: frame header,
 * then blocks whose headers give their sizes), so the most a body can decode to is known
 * without decoding it: a raw or RLE block says its size, a compressed block decodes to at most
 * 128 KiB. A body that could exceed `limit`, declares a larger content size or window, or is
 * not made of plain zstd frames is refused; only then does fzstd decode it.
 */
import { decompress } from 'fzstd';

const MAGIC = 0xfd2fb528;
/** Block_Maximum_Size. */
const MAX_BLOCK = 128 * 1024;
/** The largest window accepted: what a decoder allocates for a frame without a content size. */
const MAX_WINDOW = 8 * 1024 * 1024;
const FCS_BYTES = [0, 2, 4, 8];
const DICT_BYTES = [0, 1, 2, 4];

export type Inflated = { ok: true; body: Buffer } | { ok: false; reason: string };

/** Walks the frames of `data`; returns the most they decode to, or why they are refused. */
function bound(data: Buffer, limit: number): number | string {
  let at = 0;
  let total = 0;
  while (at < data.length) {
    if (data.length - at < 6 || data.readUInt32LE(at) !== MAGIC) return 'is not a zstd frame';
    const descriptor = data[at + 4] as number;
    const singleSegment = (descriptor >> 5) & 1;
    if (descriptor & 0x08) return 'sets a reserved bit';
    if (descriptor & 0x03) return 'names a dictionary';
    at += 5;
    let window = 0;
    if (!singleSegment) {
      const wd = data[at++] as number;
      const base = 2 ** (10 + (wd >> 3));
      window = base + (base / 8) * (wd & 7);
    }
    const fcsBytes = FCS_BYTES[descriptor >> 6] || singleSegment;
    if (at + fcsBytes > data.length) return 'is cut short';
    let contentSize = -1;
    if (fcsBytes === 1) contentSize = data[at] as number;
    else if (fcsBytes === 2) contentSize = data.readUInt16LE(at) + 256;
    else if (fcsBytes === 4) contentSize = data.readUInt32LE(at);
    else if (fcsBytes === 8) contentSize = Number(data.readBigUInt64LE(at));
    at += fcsBytes;
    if (singleSegment) window = contentSize;
    if (contentSize > limit || window > Math.max(limit, MAX_WINDOW)) return 'is too large';
    for (let last = 0; !last; ) {
      if (at + 3 > data.length) return 'is cut short';
      const header = data.readUIntLE(at, 3);
      at += 3;
      last = header & 1;
      const type = (header >> 1) & 3;
      const size = header >> 3;
      if (type === 3) return 'has a reserved block type';
      total += type === 2 ? MAX_BLOCK : size;
      at += type === 1 ? 1 : size;
      if (at > data.length) return 'is cut short';
      if (total > limit + MAX_BLOCK) return 'is too large';
    }
    if (descriptor & 0x04) at += 4;
    if (at > data.length) return 'is cut short';
  }
  return total;
}

/** The decoded body, at most `limit` bytes. */
export function inflateZstd(data: Buffer, limit: number): Inflated {
  const most = bound(data, limit);
  if (typeof most === 'string') return { ok: false, reason: `the zstd body ${most}` };
  let out: Uint8Array;
  try {
    out = decompress(data);
  } catch (error) {
    return { ok: false, reason: `the zstd body does not decode (${(error as Error).message})` };
  }
  if (out.length > limit) return { ok: false, reason: 'the zstd body is too large' };
  return { ok: true, body: Buffer.from(out.buffer, out.byteOffset, out.length) };
}

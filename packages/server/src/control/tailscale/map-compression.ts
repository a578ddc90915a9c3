/**
 * Map responses as zstd frames. Tailscale clients ask for `Compress: "zstd"` and decode every
 * map message as zstd. Node 20 has no zstd in zlib, so the reference C library is used through
 * zstd-napi (a native addon built at install). Full maps are mostly repeated JSON keys and
 * addresses, which compress many times over (docs/TAILSCALE.md gives the figures): that is the
 * bandwidth a fleet's map streams save on every full map and large delta.
 *
 * Level 3 is zstd's default: more costs server CPU on every message for little gain.
 */
import { Compressor } from 'zstd-napi';

const LEVEL = 3;

/**
 * One compression context for the process, its level set once: the library's `compress` sets
 * its parameters again on every call, which a fan-out pays once per stream.
 */
const compressor = new Compressor();
compressor.setParameters({ compressionLevel: LEVEL });

export function zstdCompress(content: Buffer): Buffer {
  return compressor.compress(content);
}

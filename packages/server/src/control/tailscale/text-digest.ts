/**
 * The digest a map stream keeps of a text it sent (sent-map.ts) and a round makes once beside
 * each peer's node text (map-round.ts). On its own so the round does not import what a stream
 * keeps, which imports the map's shape, which imports the round.
 */
import { hash } from 'node:crypto';

/** Bytes of SHA-256 kept: 128 bits, so two different texts never pass for the same. */
const DIGEST_BYTES = 16;

/** A text's digest, as a 16-character one-byte string (32 bytes of heap where the text was). */
export function digestOf(text: string): string {
  // The one-shot hash: a fan-out digests a few texts per stream, and a Hash object each is
  // most of that cost.
  return hash('sha256', text, 'buffer').toString('latin1', 0, DIGEST_BYTES);
}

/**
 * A text as a map sends it and its digest, made together wherever the text is shared by many
 * streams (a peer's node, a user profile, the DNS config and DERP map of a round): each stream
 * then keeps the digest without hashing the text again.
 */
export interface SentText {
  text: string;
  digest: string;
}

export const sentText = (text: string): SentText => ({ text, digest: digestOf(text) });

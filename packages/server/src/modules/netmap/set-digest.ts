/**
 * An order-free digest of a set of strings: the XOR of a 128-bit hash of each member. Adding or
 * removing a member is one XOR, so a set that differs from a known one by a few members (every
 * device but me; the online devices I see) is summarised without visiting the rest. Members are
 * server-made ids and texts, so the XOR of hashes is as good at telling sets apart as hashing
 * their concatenation, which is all netmap versions need it for.
 */
import { createHash } from 'node:crypto';

export const DIGEST_WORDS = 4;

/** Writes the hash of `text` into `into` at word offset `at`. */
export function hashInto(text: string, into: Uint32Array, at: number): void {
  const digest = createHash('sha1').update(text).digest();
  for (let w = 0; w < DIGEST_WORDS; w++) into[at + w] = digest.readUInt32LE(4 * w);
}

export class SetDigest {
  readonly words = new Uint32Array(DIGEST_WORDS);

  /** Adds (or, as XOR is its own inverse, removes) the member whose hash is at `from[at…]`. */
  toggle(from: Uint32Array, at: number): this {
    for (let w = 0; w < DIGEST_WORDS; w++) this.words[w] ^= from[at + w];
    return this;
  }

  merge(other: SetDigest): this {
    return this.toggle(other.words, 0);
  }

  hex(): string {
    return Buffer.from(this.words.buffer, this.words.byteOffset, this.words.byteLength).toString('hex');
  }
}

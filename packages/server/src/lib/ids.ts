/** Opaque, prefixed identifiers: `dev_3k9x…`. 80 random bits, lowercase base32. */
import { randomBytes } from 'node:crypto';
import { ID_PREFIX, type IdKind } from '@warren/contract';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

export function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

export function newId(kind: IdKind): string {
  return `${ID_PREFIX[kind]}_${base32(randomBytes(10))}`;
}

/** The bytes of a base32 text (whole bytes only), or undefined when it is not base32. */
export function fromBase32(text: string): Buffer | undefined {
  const bytes: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text) {
    const digit = ALPHABET.indexOf(char);
    if (digit < 0) return undefined;
    value = ((value << 5) | digit) & 0xffff;
    bits += 5;
    if (bits >= 8) {
      bytes.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(bytes);
}

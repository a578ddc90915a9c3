/**
 * NaCl's `crypto_box` (Curve25519, XSalsa20, Poly1305): how a DERP client proves that it holds
 * the private half of the node key it connects with, and how the relay answers it. Tailscale
 * seals these messages with Go's `nacl/box`, whose output is a 24-byte nonce followed by the
 * Poly1305 tag and the ciphertext.
 *
 * node:crypto has X25519 but no XSalsa20, so the stream cipher comes from @noble/ciphers (audited,
 * maintained); the key agreement stays in node:crypto.
 */
import { createPrivateKey, createPublicKey, diffieHellman, type KeyObject, randomBytes } from 'node:crypto';
import { hsalsa, xsalsa20poly1305 } from '@noble/ciphers/salsa.js';

export const KEY_LENGTH = 32;
export const NONCE_LENGTH = 24;
/** The Poly1305 tag every sealed message carries. */
export const BOX_OVERHEAD = 16;

// DER prefixes that turn 32 raw bytes into the PKCS#8 / SPKI forms node:crypto imports (RFC 8410).
const PKCS8_X25519 = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_X25519 = Buffer.from('302a300506032b656e032100', 'hex');

/** "expand 32-byte k" as little-endian words: the constant HSalsa20 starts from. */
const SIGMA = new Uint32Array([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);

export function privateKeyFromRaw(raw: Uint8Array): KeyObject {
  if (raw.length !== KEY_LENGTH) throw new Error('an X25519 private key is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([PKCS8_X25519, raw]), format: 'der', type: 'pkcs8' });
}

export function publicKeyFromRaw(raw: Uint8Array): KeyObject {
  if (raw.length !== KEY_LENGTH) throw new Error('an X25519 public key is 32 bytes');
  return createPublicKey({ key: Buffer.concat([SPKI_X25519, raw]), format: 'der', type: 'spki' });
}

/** The 32 raw bytes of the public half of a private key. */
export function rawPublicKey(privateKey: KeyObject): Buffer {
  const der = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - KEY_LENGTH);
}

/**
 * `crypto_box_beforenm`: the X25519 shared secret hashed by HSalsa20 with a zero nonce. Throws
 * when the peer's key is a low-order point (the shared secret would be all zeros).
 */
export function boxKey(ourPrivate: KeyObject, theirPublic: Uint8Array): Uint8Array {
  const shared = diffieHellman({ privateKey: ourPrivate, publicKey: publicKeyFromRaw(theirPublic) });
  const out = new Uint32Array(8);
  hsalsa(SIGMA, new Uint32Array(new Uint8Array(shared).buffer), new Uint32Array(4), out);
  return new Uint8Array(out.buffer);
}

/** Seals `message` for the holder of `theirPublic`: nonce ‖ tag ‖ ciphertext. */
export function seal(message: Uint8Array, ourPrivate: KeyObject, theirPublic: Uint8Array): Buffer {
  const nonce = randomBytes(NONCE_LENGTH);
  const sealed = xsalsa20poly1305(boxKey(ourPrivate, theirPublic), nonce).encrypt(message);
  return Buffer.concat([nonce, sealed]);
}

/** Opens what `theirPublic`'s holder sealed for us; `undefined` when it is not authentic. */
export function open(box: Uint8Array, ourPrivate: KeyObject, theirPublic: Uint8Array): Buffer | undefined {
  if (box.length < NONCE_LENGTH + BOX_OVERHEAD) return undefined;
  try {
    const nonce = box.subarray(0, NONCE_LENGTH);
    return Buffer.from(xsalsa20poly1305(boxKey(ourPrivate, theirPublic), nonce).decrypt(box.subarray(NONCE_LENGTH)));
  } catch {
    return undefined; // a forged or corrupted box, or a low-order key
  }
}

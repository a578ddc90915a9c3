/**
 * The primitives of Tailscale's control protocol (Noise_IK_25519_ChaChaPoly_BLAKE2s), on
 * node:crypto: X25519 from raw 32-byte keys, ChaCha20-Poly1305 with Tailscale's nonce layout
 * (four zero bytes, then a 64-bit big-endian counter — big-endian, unlike the Noise spec's
 * little-endian), BLAKE2s-256 and its HMAC-based HKDF.
 */
import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  type KeyObject,
} from 'node:crypto';

export const KEY_LEN = 32;
export const TAG_LEN = 16;

// DER prefixes of RFC 8410 X25519 keys: node:crypto takes raw keys only wrapped in these.
const PKCS8_PREFIX = Buffer.from('302e020100300506032b656e04220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b656e032100', 'hex');

export interface X25519KeyPair {
  privateKey: KeyObject;
  /** The raw 32-byte public key. */
  publicKey: Buffer;
}

export function x25519Private(raw: Buffer): X25519KeyPair {
  if (raw.length !== KEY_LEN) throw new Error('an X25519 private key is 32 bytes');
  const privateKey = createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, raw]), format: 'der', type: 'pkcs8' });
  return { privateKey, publicKey: rawPublic(createPublicKey(privateKey)) };
}

export function x25519Generate(): X25519KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  return { privateKey, publicKey: rawPublic(publicKey) };
}

function rawPublic(key: KeyObject): Buffer {
  const der = key.export({ format: 'der', type: 'spki' });
  return der.subarray(der.length - KEY_LEN);
}

/** X25519(private, public). Throws on a low-order public key (an all-zero shared secret). */
export function x25519(privateKey: KeyObject, publicRaw: Buffer): Buffer {
  const publicKey = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicRaw]), format: 'der', type: 'spki' });
  return diffieHellman({ privateKey, publicKey });
}

export function blake2s(...parts: Buffer[]): Buffer {
  const h = createHash('blake2s256');
  for (const p of parts) h.update(p);
  return h.digest();
}

function hmac(key: Buffer, ...parts: Buffer[]): Buffer {
  const h = createHmac('blake2s256', key);
  for (const p of parts) h.update(p);
  return h.digest();
}

/** HKDF with HMAC-BLAKE2s, two outputs (Noise's HKDF(ck, ikm), RFC 5869 with salt = ck). */
export function hkdf2(chainingKey: Buffer, ikm: Buffer): [Buffer, Buffer] {
  const prk = hmac(chainingKey, ikm);
  const out1 = hmac(prk, Buffer.of(1));
  const out2 = hmac(prk, out1, Buffer.of(2));
  return [out1, out2];
}

export function nonceOf(counter: bigint, into: Buffer = Buffer.alloc(12)): Buffer {
  into.writeBigUInt64BE(counter, 4);
  return into;
}

const ZERO_NONCE = Buffer.alloc(12);

export function seal(key: Buffer, nonce: Buffer, plaintext: Buffer, ad?: Buffer): Buffer {
  return Buffer.concat(sealParts(key, nonce, plaintext, ad));
}

/**
 * The ciphertext and the tag as two buffers, for a caller that writes them beside others (a
 * Noise record, its header first) with one copy for all of them rather than one per record.
 */
export function sealParts(key: Buffer, nonce: Buffer, plaintext: Buffer, ad?: Buffer): [Buffer, Buffer] {
  const c = createCipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG_LEN });
  if (ad) c.setAAD(ad, { plaintextLength: plaintext.length });
  const body = c.update(plaintext);
  c.final();
  return [body, c.getAuthTag()];
}

/** Decrypts and authenticates; undefined when the tag does not verify. */
export function open(key: Buffer, nonce: Buffer, ciphertext: Buffer, ad?: Buffer): Buffer | undefined {
  if (ciphertext.length < TAG_LEN) return undefined;
  const body = ciphertext.subarray(0, ciphertext.length - TAG_LEN);
  const d = createDecipheriv('chacha20-poly1305', key, nonce, { authTagLength: TAG_LEN });
  d.setAuthTag(ciphertext.subarray(ciphertext.length - TAG_LEN));
  if (ad) d.setAAD(ad, { plaintextLength: body.length });
  const out = d.update(body);
  try {
    d.final();
  } catch {
    return undefined;
  }
  return out;
}

/** Handshake messages use each derived key once, with the zero nonce. */
export const sealOnce = (key: Buffer, plaintext: Buffer, ad: Buffer) => seal(key, ZERO_NONCE, plaintext, ad);
export const openOnce = (key: Buffer, ciphertext: Buffer, ad: Buffer) => open(key, ZERO_NONCE, ciphertext, ad);

/**
 * Secrets the server must read back (an OpenID client secret), kept at rest only sealed:
 * AES-256-GCM under a key derived from the server secret for one purpose, a random 96-bit
 * nonce per seal, and the record the secret belongs to as associated data, so a sealed value
 * copied onto another record, altered or truncated fails to open instead of being used.
 * Sealed text: `v1.` + base64url(nonce ‖ ciphertext ‖ tag); the version leaves room for a
 * later key or cipher without guessing what a stored value is.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deriveKey } from './server-secret.js';

const VERSION = 'v1.';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** A sealed value that did not open: altered, bound to another record, or sealed under another key. */
export class UnreadableSecretError extends Error {}

export class SecretBox {
  private readonly key: Buffer;

  /** `purpose` names what is sealed (and its version); each purpose has a key of its own. */
  constructor(serverSecret: Buffer, purpose: string) {
    this.key = deriveKey(serverSecret, purpose);
  }

  /** Seals `plaintext` for the record named by `boundTo` (e.g. its id). */
  seal(plaintext: string, boundTo: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce).setAAD(Buffer.from(boundTo, 'utf8'));
    const sealed = Buffer.concat([nonce, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return VERSION + sealed.toString('base64url');
  }

  /** The plaintext of a value `seal` made for the same record; UnreadableSecretError otherwise. */
  open(sealed: string, boundTo: string): string {
    if (!sealed.startsWith(VERSION)) throw new UnreadableSecretError('not a sealed value of a known version');
    const bytes = Buffer.from(sealed.slice(VERSION.length), 'base64url');
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new UnreadableSecretError('the sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', this.key, bytes.subarray(0, NONCE_BYTES), {
      authTagLength: TAG_BYTES,
    });
    decipher.setAAD(Buffer.from(boundTo, 'utf8'));
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
    try {
      const plaintext = Buffer.concat([
        decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)),
        decipher.final(),
      ]);
      return plaintext.toString('utf8');
    } catch {
      // GCM's tag check failed: never hand back what the altered bytes decrypt to.
      throw new UnreadableSecretError('the sealed value does not authenticate');
    }
  }
}

/**
 * Secrets: `wrn_<kind>_` + 32 random bytes (256 bits) in base62 + a 6-character CRC32
 * checksum, so scanners can recognise them and typos are rejected before any lookup.
 * Only the SHA-256 of a secret is stored; a fast hash is right for high-entropy tokens
 * (a slow KDF per request would buy nothing and cost ~170 ms).
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { SECRET_PREFIX, type SecretKind } from '@warren/contract';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 43; // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6;
const BASE62_ONLY = /^[0-9A-Za-z]+$/;

function toBase62(value: bigint, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = BASE62[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

/** `value` (below 2^53) in base62, `length` digits: the checksum, on every call, without BigInt. */
function smallToBase62(value: number, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = BASE62[value % 62] + out;
    value = Math.floor(value / 62);
  }
  return out;
}

/** CRC-32 (IEEE) of each character's low byte, a byte per step from a table of the 256 remainders. */
const CRC_TABLE = Int32Array.from({ length: 256 }, (_, byte) => {
  let crc = byte;
  for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  return crc;
});

/**
 * The checksum of `text[start, end)`. Every API call checks one (isWellFormedSecret): a table
 * step per character instead of eight shifts per character, and no slice of the secret.
 */
function crc32(text: string, start = 0, end = text.length): number {
  let crc = 0xffffffff;
  for (let i = start; i < end; i++) crc = (crc >>> 8) ^ CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]!;
  return (crc ^ 0xffffffff) >>> 0;
}

export function generateSecret(kind: SecretKind): string {
  const body = toBase62(BigInt(`0x${randomBytes(32).toString('hex')}`), BODY_LENGTH);
  return `${SECRET_PREFIX[kind]}${body}${smallToBase62(crc32(body), CHECKSUM_LENGTH)}`;
}

/** True when `secret` has the prefix and length of a `kind` secret: the cheap part of isWellFormedSecret. */
export function hasSecretLength(kind: SecretKind, secret: string): boolean {
  const prefix = SECRET_PREFIX[kind];
  return secret.startsWith(prefix) && secret.length === prefix.length + BODY_LENGTH + CHECKSUM_LENGTH;
}

/** True when `secret` has the shape and checksum of a `kind` secret. */
export function isWellFormedSecret(kind: SecretKind, secret: string): boolean {
  if (!hasSecretLength(kind, secret)) return false;
  const prefix = SECRET_PREFIX[kind];
  if (!BASE62_ONLY.test(secret.slice(prefix.length))) return false;
  const bodyEnd = prefix.length + BODY_LENGTH;
  return secret.slice(bodyEnd) === smallToBase62(crc32(secret, prefix.length, bodyEnd), CHECKSUM_LENGTH);
}

const ANY_SECRET = new RegExp(`(${Object.values(SECRET_PREFIX).join('|')})[0-9A-Za-z]+`, 'g');

/**
 * A one-time link's token in a request path: a machine login's (`/register/{token}`, the
 * console's `/auth/register/{token}[/approve]`) or a Tailscale SSH check's (`/ssh-check/{token}`,
 * `/auth/ssh-check/{token}[/approve]`, the destination's `/machine/ssh/check/{network}/{token}`).
 * Whoever holds a pending login's token can approve a stranger's machine into their own account,
 * so it is as much a secret as a key. Anchored: only these routes carry one.
 */
const LINK_TOKEN = /^(\/(?:auth\/)?(?:register|ssh-check)\/|\/machine\/ssh\/check\/[^/]*\/)[^/]+/;

/**
 * `text` with every secret-looking token cut to its prefix (`wrn_api_…`), checksum or not (a
 * mistyped secret is still almost the secret), and a one-time link's token cut to its route
 * (`/register/…`). For what is kept of a request, such as the path the audit log records: a
 * client that puts a key where an id belongs must not leave it there, nor a link its token.
 */
export function redactSecrets(text: string): string {
  // Tested before replaced: this runs on every call's path (the audit row, the log line), and a
  // replacement with `$1` takes V8's slow path even where nothing matches (0.2 µs a call).
  const path = LINK_TOKEN.test(text) ? text.replace(LINK_TOKEN, '$1…') : text;
  return path.includes('wrn_') ? path.replace(ANY_SECRET, '$1…') : path;
}

/** SHA-256 in hex; `hash` is the one-shot form, a third of createHash's cost on a short input. */
export function hashSecret(secret: string): string {
  return hash('sha256', secret, 'hex');
}

/** Constant-time comparison of two hex digests. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && timingSafeEqual(x, y);
}

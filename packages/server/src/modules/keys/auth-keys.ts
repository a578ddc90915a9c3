/**
 * Auth keys as enrollment reads them: the key of a secret (looked up by its SHA-256, compared
 * again in constant time) and whether it may enroll now. Every device protocol asks here; the
 * state checks answer early, and the enrollment transaction checks them again atomically (a
 * conditional UPDATE), which is what makes single-use keys race-free.
 */
import { SECRET_PREFIX } from '@warren/contract';
import type { Selectable } from 'kysely';
import { type ApiError, unauthenticated } from '../../core/errors.js';
import { hashSecret, isWellFormedSecret, sameHash } from '../../lib/secrets.js';
import type { Db } from '../../storage/database.js';
import type { KeysTable } from '../../storage/schema.js';

export type AuthKeyRow = Pick<
  Selectable<KeysTable>,
  | 'id'
  | 'network_id'
  | 'secret_hash'
  | 'reusable'
  | 'ephemeral'
  | 'tags'
  | 'user_id'
  | 'expires_at'
  | 'revoked_at'
  | 'used_at'
  | 'pre_approved'
  | 'description'
>;

const COLUMNS = [
  'id',
  'network_id',
  'secret_hash',
  'reusable',
  'ephemeral',
  'tags',
  'user_id',
  'expires_at',
  'revoked_at',
  'used_at',
  'pre_approved',
  'description',
] as const;

/**
 * Why a key cannot enroll now, or undefined. Revoked beats used beats expired (as the key's
 * listed state). A spent single-use key answers `key_revoked`: it is permanently unusable,
 * like a revoked one, and the detail says why.
 */
export function keyRefusal(key: AuthKeyRow, now: number): ApiError | undefined {
  if (key.revoked_at != null) return unauthenticated(`auth key ${key.id} was revoked`, 'key_revoked');
  if (key.reusable === 0 && key.used_at != null) {
    return unauthenticated(
      `auth key ${key.id} is single-use and has already enrolled a device; create a new key`,
      'key_revoked',
    );
  }
  if (key.expires_at <= now) return unauthenticated(`auth key ${key.id} expired`, 'key_expired');
  return undefined;
}

/** Re-reads a key inside a transaction whose conditional update refused it, to say why. */
export async function refusalNow(trx: Db, keyId: string, now: number): Promise<ApiError> {
  const key = await trx.selectFrom('keys').select(COLUMNS).where('id', '=', keyId).executeTakeFirst();
  return (key && keyRefusal(key, now)) || unauthenticated('the auth key is not valid');
}

/** The auth key with this secret hash (compared in constant time once found). */
export async function authKeyByHash(db: Db, hash: string): Promise<AuthKeyRow | undefined> {
  const key = await db
    .selectFrom('keys')
    .select(COLUMNS)
    .where('secret_hash', '=', hash)
    .where('type', '=', 'auth')
    .executeTakeFirst();
  return key && sameHash(key.secret_hash, hash) ? key : undefined;
}

/**
 * Why `secret` logs nothing in, naming what it is when a person moving from Tailscale passed
 * one of Tailscale's keys, or a Warren OAuth client's secret bare (Tailscale's `up` trades a
 * client secret for an auth key only when it is written `tskey-client-…`; otherwise it passes
 * it on as the key), rather than only what it is not.
 */
function notAnAuthKey(secret: string): string {
  if (secret.startsWith('tskey-')) {
    return 'this is a Tailscale key: Warren takes its own auth keys (wrn_auth_…), made with warren keys create or POST /v1/keys';
  }
  if (secret.startsWith(SECRET_PREFIX.client)) {
    return "this is an OAuth client secret, not an auth key: pass it as 'tskey-client-<client id>-<secret>?baseURL=<Warren's URL>' with --advertise-tags, as Tailscale's are passed";
  }
  return 'this is not a valid Warren auth key (wrn_auth_…)';
}

/**
 * The auth key of a secret and whether it may enroll now, for callers that carry the key in
 * their body (Tailscale's register): the key, or the refusal.
 */
export async function usableAuthKey(db: Db, secret: string, now: number): Promise<AuthKeyRow | ApiError> {
  if (!isWellFormedSecret('auth', secret)) return unauthenticated(notAnAuthKey(secret));
  const hash = hashSecret(secret);
  const key = await authKeyByHash(db, hash);
  if (!key) return unauthenticated('the auth key is not known');
  return keyRefusal(key, now) ?? key;
}

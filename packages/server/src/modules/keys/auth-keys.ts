/**
 * Authentication of POST /v1/node/register: `Authorization: Bearer wrn_auth_…` → the auth
 * key. Like API keys, the secret's shape and checksum are checked before any lookup, and
 * callers without a usable key are rate-limited per client address; with a known key, per
 * key (`enroll:<keyId>`). The state checks here answer early; the enrollment transaction
 * checks them again atomically (a conditional UPDATE), which is what makes single-use keys
 * race-free.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import { bearerToken } from '../../http/authenticate.js';
import { rateLimited, setRateLimitHeaders } from '../../http/pipeline.js';
import { type ApiError, unauthenticated } from '../../http/problem.js';
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
] as const;

const authKeys = new WeakMap<FastifyRequest, AuthKeyRow>();

/**
 * Why a key cannot enroll now, or undefined. Revoked beats used beats expired (as the key's
 * listed state). A spent single-use key answers `key_revoked`: it is permanently unusable,
 * like a revoked one, and the detail says why.
 */
function keyRefusal(key: AuthKeyRow, now: number): ApiError | undefined {
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
async function authKeyByHash(db: Db, hash: string): Promise<AuthKeyRow | undefined> {
  const key = await db
    .selectFrom('keys')
    .select(COLUMNS)
    .where('secret_hash', '=', hash)
    .where('type', '=', 'auth')
    .executeTakeFirst();
  return key && sameHash(key.secret_hash, hash) ? key : undefined;
}

/**
 * The auth key of a secret and whether it may enroll now, for callers outside the HTTP
 * pipeline (Tailscale's register, which carries the key in its body): the key, or the refusal.
 */
export async function usableAuthKey(db: Db, secret: string, now: number): Promise<AuthKeyRow | ApiError> {
  if (!isWellFormedSecret('auth', secret)) return unauthenticated('this is not a valid Warren auth key (wrn_auth_…)');
  const hash = hashSecret(secret);
  const key = await authKeyByHash(db, hash);
  if (!key) return unauthenticated('the auth key is not known');
  return keyRefusal(key, now) ?? key;
}

export async function authenticateAuthKey(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  const refuse = async (detail: string): Promise<never> => {
    const decision = await ctx.limiter.hit(`addr:${request.ip}`, ctx.settings.anonymousRateLimit);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw rateLimited(decision, `client ${request.ip}`);
    throw unauthenticated(detail);
  };
  const token = bearerToken(request);
  if (!token) return refuse('send an auth key as "Authorization: Bearer wrn_auth_…"');
  if (!isWellFormedSecret('auth', token)) {
    return refuse(
      isWellFormedSecret('api', token)
        ? 'this is an API key; enrolling a device needs an auth key (wrn_auth_…)'
        : 'the bearer token is not a valid Warren auth key',
    );
  }
  const hash = hashSecret(token);
  const key = await authKeyByHash(ctx.db, hash);
  if (!key) return refuse('the auth key is not known');
  request.networkId = key.network_id;
  const decision = await ctx.limiter.hit(`enroll:${key.id}`, ctx.settings.enrollRateLimit);
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) throw rateLimited(decision, `auth key ${key.id}`);
  const refusal = keyRefusal(key, ctx.clock.now());
  if (refusal) throw refusal;
  authKeys.set(request, key);
}

/** The auth key authenticateAuthKey accepted for this request. */
export function authKeyOf(request: FastifyRequest): AuthKeyRow {
  const key = authKeys.get(request);
  if (!key) throw new Error('authenticateAuthKey did not run for this route');
  return key;
}

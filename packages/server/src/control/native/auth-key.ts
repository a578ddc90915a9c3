/**
 * Authentication of POST /v1/node/register: `Authorization: Bearer wrn_auth_…` → the auth
 * key. Like API keys, the secret's shape and checksum are checked before any lookup, and
 * callers without a usable key are rate-limited per client address; with a known key, per
 * key (`enroll:<keyId>`). Whether the key may enroll is the keys module's rule
 * (modules/keys/auth-keys.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { unauthenticated } from '../../core/errors.js';
import { bearerToken } from '../../edge/bearer-token.js';
import { clientAddress } from '../../edge/client-address.js';
import { rateLimited, setRateLimitHeaders } from '../../edge/rate-limit-reply.js';
import { hashSecret, isWellFormedSecret } from '../../lib/secrets.js';
import { type AuthKeyRow, authKeyByHash, keyRefusal } from '../../modules/keys/auth-keys.js';

const authKeys = new WeakMap<FastifyRequest, AuthKeyRow>();

export async function authenticateAuthKey(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  const refuse = async (detail: string): Promise<never> => {
    const decision = await ctx.limiter.hit(`addr:${clientAddress(request)}`, ctx.settings.anonymousRateLimit);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) throw rateLimited(decision, `client ${clientAddress(request)}`);
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
  // A registration that enrolls nothing (refused, or a bad body) is recorded under the auth key,
  // as a revoked API key's calls are under it; one that enrolls names its device instead, in the
  // entry its change writes (so this never reaches that entry).
  request.refusedKey = { keyId: key.id, keyName: key.description || null };
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

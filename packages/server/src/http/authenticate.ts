/**
 * Bearer API key → principal. The secret's shape and checksum are checked before any
 * lookup; the lookup is by SHA-256 and the digest is compared again in constant time.
 * Expiry and revocation are checked on every call, so a deleted key stops at once: the row
 * may come from a cache, but one that any commit empties.
 */
import type { Scope } from '@warren/contract';
import type { ApiPrincipal } from '../edge/request-principals.js';
import { parseList } from '../lib/json.js';
import { hashSecret, isWellFormedSecret, sameHash } from '../lib/secrets.js';
import { CommittedCache } from '../storage/committed-cache.js';
import { compiledQuery } from '../storage/compiled-query.js';
import type { Db } from '../storage/database.js';
import { insufficientScope, unauthenticated } from './problem.js';

/** Run on every API call, so built once (storage/compiled-query.ts). */
const apiKeyByHash = compiledQuery((db, p: { hash: string }) =>
  db
    .selectFrom('keys')
    .select(['id', 'network_id', 'name', 'scopes', 'expires_at', 'revoked_at', 'rate_limit', 'secret_hash'])
    .where('secret_hash', '=', p.hash)
    .where('type', '=', 'api'),
);

/** A key's row with its scopes parsed once, for as long as the row is kept. */
type KeyRow = Awaited<ReturnType<typeof apiKeyByHash>>[number] & { scopeList: Scope[] };

/** Rows by secret hash, kept until the next commit (storage/committed-cache.ts). */
const keysByHash = new CommittedCache<KeyRow>();

async function loadKey(db: Db, hash: string): Promise<KeyRow | undefined> {
  const [row] = await apiKeyByHash(db, { hash });
  return row && { ...row, scopeList: parseList(row.scopes) as Scope[] };
}

export async function authenticateApiKey(
  db: Db,
  token: string | undefined,
  now: number,
): Promise<ApiPrincipal & { keyId: string; rateLimit: number | null }> {
  if (!token) throw unauthenticated('send an API key as "Authorization: Bearer wrn_api_…"');
  if (!isWellFormedSecret('api', token)) throw unauthenticated('the bearer token is not a valid Warren API key');
  const hash = hashSecret(token);
  const key = await keysByHash.get(db, hash, () => loadKey(db, hash));
  if (!key || !sameHash(key.secret_hash, hash)) throw unauthenticated('the API key is not known');
  if (key.revoked_at != null) throw unauthenticated(`API key ${key.id} was revoked`, 'key_revoked');
  if (key.expires_at <= now) throw unauthenticated(`API key ${key.id} expired`, 'key_expired');
  return {
    networkId: key.network_id,
    keyId: key.id,
    keyName: key.name ?? key.id,
    scopes: key.scopeList,
    expiresAt: key.expires_at,
    rateLimit: key.rate_limit,
  };
}

/** `all` grants everything; a GET is also granted by `read`; otherwise the route's own scope. */
export function hasScope(scopes: readonly Scope[], method: string, needed: Scope | 'any' | undefined): boolean {
  if (scopes.includes('all') || needed === 'any') return true;
  if ((method === 'GET' || method === 'HEAD') && scopes.includes('read')) return true;
  return needed !== undefined && needed !== 'all' && scopes.includes(needed);
}

export function requireScope(principal: ApiPrincipal, method: string, needed: Scope | 'any' | undefined): void {
  if (!hasScope(principal.scopes, method, needed)) {
    throw insufficientScope(
      needed === undefined || needed === 'any' ? (method === 'GET' || method === 'HEAD' ? 'read' : 'all') : needed,
    );
  }
}

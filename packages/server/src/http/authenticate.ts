/**
 * Bearer API key, or an OAuth client's access token (Tailscale API v2), → principal. The secret's shape and checksum are checked before any
 * lookup; the lookup is by SHA-256 and the digest is compared again in constant time.
 * Expiry and revocation are checked on every call, so a deleted key stops at once: the row
 * may come from a cache, but one that any commit empties. On PostgreSQL, where nothing tells
 * one instance of another's commit, the row is read on every call, together with the call's
 * rate-limit hit.
 */
import type { Scope, TailscaleResource } from '@warren/contract';
import type { AppContext, RateLimitDecision } from '../core/context.js';
import { decisionsOfGroup, type HitManyRow, WINDOW_MS } from '../edge/rate-limiter.js';
import type { ApiPrincipal } from '../edge/request-principals.js';
import { parseList } from '../lib/json.js';
import { hashSecret, hasSecretLength, isWellFormedSecret, sameHash } from '../lib/secrets.js';
import type { Clock } from '../lib/time.js';
import { batchedWrites } from '../lib/write-batches.js';
import { accessTokenByHash } from '../modules/oauth/access-tokens.js';
import { allowsCall, warrenScopesOf } from '../modules/oauth/scopes.js';
import { CommittedCache } from '../storage/committed-cache.js';
import { compiledQuery } from '../storage/compiled-query.js';
import type { Db } from '../storage/database.js';
import { runPrepared } from '../storage/pg-statements.js';
import { ApiError, insufficientScope, unauthenticated } from './problem.js';

/** Run on every API call, so built once (storage/compiled-query.ts). */
const apiKeyByHash = compiledQuery((db, p: { hash: string }) =>
  db
    .selectFrom('keys')
    .select(['id', 'network_id', 'name', 'scopes', 'expires_at', 'revoked_at', 'rate_limit', 'secret_hash'])
    .where('secret_hash', '=', p.hash)
    .where('type', '=', 'api'),
);

/** A key's row with its scopes parsed once, for as long as the row is kept. */
type KeyRow = Awaited<ReturnType<typeof apiKeyByHash>>[number] & {
  scopeList: Scope[];
  read_seq?: string | number | null;
  list_seq?: string | number | null;
  record_seq?: string | number | null;
};

/** Rows by secret hash, kept until the next commit (storage/committed-cache.ts). */
const keysByHash = new CommittedCache<KeyRow>();

async function loadKey(db: Db, hash: string): Promise<KeyRow | undefined> {
  const [row] = await apiKeyByHash(db, { hash });
  return row && { ...row, scopeList: parseList(row.scopes) as Scope[] };
}

/**
 * PostgreSQL: the key's row and the rate-limit hits of the calls made with it, in one
 * statement: one round trip fewer on every API call (the node credential check does the same
 * with `rate_limit_hit`). The hits are counted by `rate_limit_hit_many` (migration 027) under
 * the bucket's lock, exactly as the limiter counts them, and only for a key that is neither
 * revoked nor expired at the statement's time; a key refused here is counted against its
 * caller's address instead, as before. `offset 0` keeps the subquery from being merged into the
 * join, where its condition would filter the function's row after the call instead of deciding
 * whether to call it. The limit is the key's own, read in the same statement, so a new limit
 * applies to the very next call. The network's read stamp (migration 032) and device list stamp
 * (migration 029: an index range of a few counters) and device record stamp (migration 044, the
 * same for what routes show of devices) come with the key: a read it serves may answer
 * from what was kept at those stamps (storage/compiled-query.ts).
 */
const KEY_AND_HITS = `
  select k.id, k.network_id, k.name, k.scopes, k.expires_at, k.revoked_at, k.rate_limit, k.secret_hash,
         h.out_live, h.out_oldest, h.out_allowed, s.seq as read_seq,
         (select coalesce(sum(d.seq), 0)::bigint from device_list_stamps d where d.network_id = k.network_id) as list_seq,
         (select coalesce(sum(r.seq), 0)::bigint from device_record_stamps r where r.network_id = k.network_id) as record_seq
  from keys k
  left join read_stamps s on s.network_id = k.network_id
  left join lateral (
    select * from rate_limit_hit_many('key:' || k.id, $2, $3, coalesce(k.rate_limit, $4), $5)
    where k.revoked_at is null and k.expires_at > $2 offset 0
  ) h on true
  where k.secret_hash = $1 and k.type = 'api'`;

interface KeyCheck {
  clock: Clock;
  defaultLimit: number;
}

interface CheckedKey {
  key: KeyRow | undefined;
  /** The call's hit on `key:<id>`, when the statement counted it. */
  counted?: RateLimitDecision;
}

/**
 * Calls made with one key while its statement is in flight wait and go together in the next
 * one (lib/write-batches.ts), which reads the key once and counts all of their hits, in arrival
 * order, as the limiter's group commit does. Each of them sees the key as it was after it
 * arrived, so a revocation committed before a call is never missed. Where the database handle
 * has no pool of its own, the key is read alone and the caller asks the limiter.
 */
const checkKey = batchedWrites(async (db: Db, hash: string, checks: readonly KeyCheck[]): Promise<CheckedKey[]> => {
  const { clock, defaultLimit } = checks[0]!;
  const now = clock.now();
  const values = [hash, now, now - WINDOW_MS, defaultLimit, checks.length];
  const prepared = runPrepared(db, 'warren_api_key_and_hits', KEY_AND_HITS, values);
  if (!prepared) {
    const key = await loadKey(db, hash);
    return checks.map(() => ({ key }));
  }
  const [row] = (await prepared) as (NonNullable<KeyRow> & Partial<HitManyRow>)[];
  if (!row) return checks.map(() => ({ key: undefined }));
  const key = { ...row, scopeList: parseList(row.scopes) as Scope[] };
  if (row.out_allowed == null) return checks.map(() => ({ key }));
  const limit = row.rate_limit ?? defaultLimit;
  return decisionsOfGroup(row as HitManyRow, checks.length, limit, now).map((counted) => ({ key, counted }));
}, 256);

/** A credential this server knows, refused because it was revoked or expired. */
export interface RefusedKey {
  networkId: string;
  keyId: string;
  keyName: string;
}

/**
 * The refused key behind each refusal that has one. Its network's audit log records the call
 * under it: after a rotation, the calls still made with the old key are what its owners look for.
 */
const refusedKeys = new WeakMap<Error, RefusedKey>();

export function refusedKeyOf(error: unknown): RefusedKey | undefined {
  return error instanceof Error ? refusedKeys.get(error) : undefined;
}

function refuseKey(key: RefusedKey, code: 'key_expired' | 'key_revoked', detail: string): never {
  const error = unauthenticated(detail, code);
  refusedKeys.set(error, key);
  throw error;
}

type TokenRow = Awaited<ReturnType<typeof accessTokenByHash>>[number] & { scopeList: string[] };

/** Tokens by hash, kept until the next commit: a deleted client's tokens stop at once. */
const tokensByHash = new CommittedCache<TokenRow>();

async function loadToken(db: Db, hash: string): Promise<TokenRow | undefined> {
  const [row] = await accessTokenByHash(db, { hash });
  return row && { ...row, scopeList: parseList(row.scopes) };
}

type KeyPrincipal = ApiPrincipal & { keyId: string; rateLimit: number | null };

/** The caller, and the decision on its rate-limit hit where authentication already counted it. */
export interface Authenticated {
  principal: KeyPrincipal;
  counted?: RateLimitDecision;
}

/**
 * An OAuth token acts as its client: the audit log and the rate limit name the client, and it
 * holds the Warren scopes its Tailscale scopes map to (modules/oauth/scopes.ts).
 */
async function authenticateAccessToken(db: Db, token: string, now: number): Promise<KeyPrincipal> {
  const hash = hashSecret(token);
  const row = await tokensByHash.get(db, hash, () => loadToken(db, hash));
  if (!row || !sameHash(row.token_hash, hash)) throw unauthenticated('the access token is not known');
  const client = { networkId: row.network_id, keyId: row.client_id, keyName: row.description || row.client_id };
  if (row.revoked_at != null) refuseKey(client, 'key_revoked', `OAuth client ${row.client_id} was deleted`);
  if (row.expires_at <= now) {
    refuseKey(client, 'key_expired', 'the access token expired; ask /api/v2/oauth/token for a new one');
  }
  return {
    networkId: row.network_id,
    keyId: row.client_id,
    keyName: row.description || row.client_id,
    scopes: warrenScopesOf(row.scopeList),
    expiresAt: row.expires_at,
    rateLimit: row.rate_limit,
    oauth: {
      scopes: row.scopeList,
      tags: parseList(row.tags),
      clientExpiresAt: row.client_expires_at == null ? Number.MAX_SAFE_INTEGER : Number(row.client_expires_at),
    },
  };
}

export async function authenticateApiKey(
  ctx: AppContext,
  token: string | undefined,
  now: number,
): Promise<Authenticated> {
  const { db } = ctx;
  if (!token) {
    throw unauthenticated('send an API key as "Authorization: Bearer wrn_api_…" (or in Basic, as the user name)');
  }
  if (isWellFormedSecret('oauth', token)) return { principal: await authenticateAccessToken(db, token, now) };
  if (!isWellFormedSecret('api', token)) {
    // A script moved over from Tailscale may still carry its Tailscale key: say so.
    if (token.startsWith('tskey-')) {
      throw unauthenticated('this is a Tailscale key; Warren takes its own API keys (wrn_api_…) or OAuth tokens');
    }
    // Either spelling, Bearer or Basic, ends here.
    throw unauthenticated('the credential is not a valid Warren API key');
  }
  const hash = hashSecret(token);
  let key: KeyRow | undefined;
  let counted: RateLimitDecision | undefined;
  if (ctx.dialect === 'postgres') {
    ({ key, counted } = await checkKey(db, hash, { clock: ctx.clock, defaultLimit: ctx.settings.apiRateLimit }));
  } else {
    key = await keysByHash.get(db, hash, () => loadKey(db, hash));
  }
  if (!key || !sameHash(key.secret_hash, hash)) throw unauthenticated('the API key is not known');
  const known = { networkId: key.network_id, keyId: key.id, keyName: key.name ?? key.id };
  if (key.revoked_at != null) refuseKey(known, 'key_revoked', `API key ${key.id} was revoked`);
  if (key.expires_at <= now) refuseKey(known, 'key_expired', `API key ${key.id} expired`);
  const principal = principalOfKey(key);
  return counted ? { principal, counted } : { principal };
}

function principalOfKey(key: KeyRow): KeyPrincipal {
  const principal: KeyPrincipal = {
    networkId: key.network_id,
    keyId: key.id,
    keyName: key.name ?? key.id,
    scopes: key.scopeList,
    expiresAt: key.expires_at,
    rateLimit: key.rate_limit,
  };
  if (key.read_seq != null) {
    principal.readStamp = { networkId: key.network_id, seq: Number(key.read_seq) };
    if (key.list_seq != null) principal.readStamp.devices = Number(key.list_seq);
    if (key.record_seq != null) principal.readStamp.records = Number(key.record_seq);
  }
  return principal;
}

/**
 * The caller of an API key kept since the last commit (SQLite) and valid at `now`, found
 * without a promise; undefined for anything else (another credential, a key not kept, one
 * that would be refused), which `authenticateApiKey` then decides and words.
 */
export function keptApiKey(db: Db, token: string | undefined, now: number): KeyPrincipal | undefined {
  // Prefix and length only: a token whose digest is a kept key's is that key, checksum and all.
  // The alphabet and checksum (0.6 µs a call) are checked where a token not kept goes next,
  // authenticateApiKey, before it is hashed there and refused.
  if (!token || !hasSecretLength('api', token)) return undefined;
  const hash = hashSecret(token);
  // Kept under its own digest (read by `secret_hash = ?`), so the lookup has compared the digests
  // already: decoding both from hex for a constant-time compare cost 0.5 µs a call and changed nothing.
  const key = keysByHash.peek(db, hash);
  if (!key || key.revoked_at != null || key.expires_at <= now) return undefined;
  let principal = keptPrincipals.get(key);
  if (!principal) {
    principal = Object.freeze(principalOfKey(key));
    keptPrincipals.set(key, principal);
  }
  return principal;
}

/**
 * The caller of a kept key row, made once per row and frozen: the same object for every call
 * until the row changes, so what a call presents of its caller (`GET /v1/me`) can be kept
 * with it (lib/kept.ts). It goes when the row does.
 */
const keptPrincipals = new WeakMap<KeyRow, KeyPrincipal>();

/**
 * `all` grants everything; a GET is also granted by `read`; otherwise the route's own scope.
 * `any` is granted by any scope, so not to a member's session, which holds none (it reads its
 * own devices through http/member-devices.ts); `self` to every caller.
 */
export function hasScope(
  scopes: readonly Scope[],
  method: string,
  needed: Scope | 'any' | 'self' | undefined,
): boolean {
  if (scopes.includes('all') || needed === 'self') return true;
  if (needed === 'any') return scopes.length > 0;
  if ((method === 'GET' || method === 'HEAD') && scopes.includes('read')) return true;
  return needed !== undefined && needed !== 'all' && scopes.includes(needed);
}

/**
 * An OAuth token on a route of /api/v2 is held to the Tailscale scope the route names (any of
 * several); anywhere else, and for every other credential, to the Warren scope.
 */
export function requireScope(
  principal: ApiPrincipal,
  method: string,
  needed: Scope | 'any' | 'self' | undefined,
  tailscale?: TailscaleResource | readonly TailscaleResource[],
): void {
  if (principal.oauth && tailscale !== undefined) {
    const resources: readonly TailscaleResource[] = typeof tailscale === 'string' ? [tailscale] : tailscale;
    if (resources.some((r) => allowsCall(principal.oauth!.scopes, method, r))) return;
    const read = method === 'GET' || method === 'HEAD';
    const scope = `${resources[0]}${read ? ':read' : ''}`;
    throw new ApiError('insufficient_scope', `this call needs an OAuth token with scope "${scope}" (or "all")`, {
      scope,
    });
  }
  if (!hasScope(principal.scopes, method, needed)) {
    const read = method === 'GET' || method === 'HEAD';
    throw insufficientScope(
      needed === undefined || needed === 'any' || needed === 'self' ? (read ? 'read' : 'all') : needed,
      read,
    );
  }
}

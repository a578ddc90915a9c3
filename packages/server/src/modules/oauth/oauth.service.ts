/**
 * OAuth clients (Tailscale API v2's `keyType: "client"`) and the client-credentials grant.
 *
 * A client holds Tailscale scopes and may hold tags. Whoever creates or changes one grants
 * nothing it cannot do itself: an API key needs, for each scope, a Warren scope that covers
 * it (scopes.ts); an OAuth client needs the scope itself, and can only pass on its own tags.
 * Only an `all` key may set a client's rate limit. The secret is shown once, at creation;
 * only its SHA-256 is kept.
 *
 * A token lasts one hour and carries the client's scopes, or the part of them the request
 * named. Deleting a client revokes it and every token it holds.
 */
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError, invalidRequest, notFound, unauthenticated } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { newId } from '../../lib/ids.js';
import { listText, parseList } from '../../lib/json.js';
import { generateSecret, hashSecret, isWellFormedSecret, sameHash } from '../../lib/secrets.js';
import { checkTags, requireOwnedTags } from '../acl/tags.js';
import {
  findClient,
  findClientById,
  insertClient,
  insertToken,
  type OAuthClientRow,
  revokeClient,
  updateClient,
} from './oauth.repository.js';
import { allowsScope, isTailscaleScope, TAILSCALE_SCOPES, warrenScopesFor } from './scopes.js';

/** As Tailscale's: an access token lasts an hour; the client asks for a new one. */
export const TOKEN_LIFETIME_SECONDS = 3600;

export interface OAuthClientRequest {
  scopes: readonly string[];
  tags: readonly string[];
  description: string;
  /** Requests per minute of the client's tokens together; only an `all` key may set it. */
  rateLimit?: number;
}

export interface OAuthClient {
  id: string;
  description: string;
  scopes: string[];
  tags: string[];
  createdAt: number;
  updatedAt: number;
  revokedAt: number | null;
  /** When the API key that made it expires; null: it lasts until deleted. */
  expiresAt: number | null;
}

export const presentClient = (row: OAuthClientRow): OAuthClient => ({
  id: row.id,
  description: row.description,
  scopes: parseList(row.scopes),
  tags: parseList(row.tags),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  revokedAt: row.revoked_at,
  expiresAt: row.expires_at == null ? null : Number(row.expires_at),
});

function grantOf(actor: Actor) {
  if (!actor.grant) throw new Error(`actor of type ${actor.type} cannot manage OAuth clients`);
  return actor.grant;
}

/** Whether the caller holds `scope` itself: an OAuth client by its own scopes, a key by Warren's. */
function holds(grant: NonNullable<Actor['grant']>, scope: string): boolean {
  if (grant.oauth) return allowsScope(grant.oauth.scopes, scope);
  return grant.scopes.includes('all') || warrenScopesFor(scope).some((s) => grant.scopes.includes(s));
}

/** The scopes and tags to store, once the caller is shown to hold all of them. */
async function checkedGrant(ctx: AppContext, actor: Actor, request: OAuthClientRequest) {
  const grant = grantOf(actor);
  if (request.scopes.length === 0) {
    throw invalidRequest(`an OAuth client needs "scopes": one or more of ${TAILSCALE_SCOPES.join(', ')}`);
  }
  for (const scope of request.scopes) {
    if (!isTailscaleScope(scope)) throw invalidRequest(`"${scope}" is not a scope: use ${TAILSCALE_SCOPES.join(', ')}`);
  }
  const scopes = [...new Set(request.scopes)].sort();
  for (const scope of scopes) {
    if (!holds(grant, scope)) {
      throw new ApiError(
        'insufficient_scope',
        `a credential can only grant scopes it has itself; it lacks "${scope}"`,
        {
          scope,
        },
      );
    }
  }
  const tags = checkTags(request.tags);
  const foreign = grant.oauth ? tags.filter((t) => !grant.oauth!.tags.includes(t)) : [];
  if (foreign.length > 0) {
    throw new ApiError(
      'invalid_tag',
      `an OAuth client can only pass on its own tags; it does not have "${foreign[0]}"`,
    );
  }
  await requireOwnedTags(ctx.db, actor.networkId, tags);
  return { scopes, tags };
}

export async function createOAuthClient(
  ctx: AppContext,
  actor: Actor,
  request: OAuthClientRequest,
): Promise<{ client: OAuthClient; secret: string }> {
  const { scopes, tags } = await checkedGrant(ctx, actor, request);
  if (request.rateLimit !== undefined && !grantOf(actor).scopes.includes('all')) {
    throw new ApiError('insufficient_scope', 'only a key with scope "all" may set rateLimit', { scope: 'all' });
  }
  const secret = generateSecret('client');
  const now = ctx.clock.now();
  const row: OAuthClientRow = {
    id: newId('key'),
    network_id: actor.networkId,
    secret_hash: hashSecret(secret),
    description: request.description,
    scopes: listText(scopes),
    tags: listText(tags),
    rate_limit: request.rateLimit ?? null,
    created_at: now,
    updated_at: now,
    revoked_at: null,
    created_by: actor.name,
    expires_at: lifetimeOf(grantOf(actor)),
  };
  return unitOfWork(ctx, actor, 'oauth_client.create', async (trx) => {
    await insertClient(trx, row);
    return { value: { client: presentClient(row), secret }, target: row.id };
  });
}

/**
 * How long a client made or changed by this caller may last: no longer than the caller, as a key
 * a key makes (a client made by a key expiring in two days would otherwise keep its scopes for
 * good). Null for a caller that does not expire (a console session).
 */
function lifetimeOf(grant: NonNullable<Actor['grant']>): number | null {
  return grant.expiresAt >= Number.MAX_SAFE_INTEGER ? null : grant.expiresAt;
}

const earlier = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));

/** Sets a client's scopes, tags and description wholesale (Tailscale's PUT); its secret stays. */
export async function setOAuthClient(
  ctx: AppContext,
  actor: Actor,
  id: string,
  request: OAuthClientRequest,
): Promise<OAuthClient> {
  const { scopes, tags } = await checkedGrant(ctx, actor, request);
  return unitOfWork(ctx, actor, 'oauth_client.update', async (trx, now) => {
    const row = await findClient(trx, actor.networkId, id);
    if (!row || row.revoked_at !== null) throw notFound(`OAuth client ${id} does not exist`);
    // The scopes given now last no longer than the caller that gives them.
    const set = {
      scopes: listText(scopes),
      tags: listText(tags),
      description: request.description,
      updated_at: now,
      expires_at: earlier(row.expires_at == null ? null : Number(row.expires_at), lifetimeOf(grantOf(actor))),
    };
    await updateClient(trx, id, set);
    return { value: presentClient({ ...row, ...set }), target: id };
  });
}

/**
 * Revokes a client and its tokens. As with keys, the caller must hold every scope the client
 * has: a narrower credential cannot cut off a wider one.
 */
export async function deleteOAuthClient(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const grant = grantOf(actor);
  await unitOfWork(ctx, actor, 'oauth_client.delete', async (trx, now) => {
    const row = await findClient(trx, actor.networkId, id);
    if (!row) throw notFound(`OAuth client ${id} does not exist`);
    for (const scope of parseList(row.scopes)) {
      if (!holds(grant, scope)) {
        throw new ApiError(
          'insufficient_scope',
          `a credential can only delete OAuth clients whose scopes it has itself; ${id} has "${scope}"`,
          { scope },
        );
      }
    }
    if (row.revoked_at === null) await revokeClient(trx, id, now);
    return { value: undefined, target: id, unchanged: row.revoked_at !== null };
  });
}

export async function getOAuthClient(ctx: AppContext, networkId: string, id: string): Promise<OAuthClient | undefined> {
  const row = await findClient(ctx.db, networkId, id);
  return row && presentClient(row);
}

/**
 * The client of a client id and secret, or 401. The secret's shape and checksum are checked
 * before any lookup, and its hash compared in constant time.
 */
export async function verifyClient(ctx: AppContext, id: string, secret: string): Promise<OAuthClientRow> {
  if (!isWellFormedSecret('client', secret))
    throw unauthenticated('the client secret is not a Warren OAuth client secret');
  const hash = hashSecret(secret);
  const row = await findClientById(ctx.db, id);
  if (!row || !sameHash(row.secret_hash, hash)) throw unauthenticated('the client id or secret is not known');
  if (row.revoked_at !== null) throw unauthenticated(`OAuth client ${id} was deleted`, 'key_revoked');
  if (row.expires_at != null && Number(row.expires_at) <= ctx.clock.now()) {
    throw unauthenticated(`OAuth client ${id} expired with the API key that made it`, 'key_expired');
  }
  return row;
}

/**
 * A new access token of a verified client. `requested` (space-separated in the request) narrows
 * the token to scopes the client holds; absent or empty, the token has all of them.
 */
export async function issueToken(
  ctx: AppContext,
  actor: Actor,
  client: OAuthClientRow,
  requested: readonly string[],
): Promise<{ token: string; scopes: string[]; expiresIn: number }> {
  const own = parseList(client.scopes);
  for (const scope of requested) {
    if (!isTailscaleScope(scope)) throw invalidRequest(`"${scope}" is not a scope: use ${TAILSCALE_SCOPES.join(', ')}`);
    if (!allowsScope(own, scope)) {
      throw new ApiError('insufficient_scope', `OAuth client ${client.id} does not have scope "${scope}"`, { scope });
    }
  }
  const scopes = requested.length > 0 ? [...new Set(requested)].sort() : own;
  const token = generateSecret('oauth');
  return unitOfWork(ctx, actor, 'oauth_token.create', async (trx, now) => {
    // An hour, or until the client expires if that comes first.
    const expiresAt = earlier(
      now + TOKEN_LIFETIME_SECONDS * 1000,
      client.expires_at == null ? null : Number(client.expires_at),
    )!;
    const row = {
      token_hash: hashSecret(token),
      client_id: client.id,
      scopes: listText(scopes),
      created_at: now,
      expires_at: expiresAt,
    };
    await insertToken(trx, row, now);
    return { value: { token, scopes, expiresIn: Math.ceil((expiresAt - now) / 1000) }, target: client.id };
  });
}

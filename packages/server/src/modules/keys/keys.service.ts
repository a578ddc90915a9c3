/**
 * Key rules. A key may only mint API keys with a subset of its own scopes, and keys of
 * either type with an expiry no later than its own (no escalation: an auth key outliving
 * its creator would keep enrolling devices after the creator's access ended); only an `all`
 * key may raise a rate limit. A key may delete only keys whose scopes are within its own
 * (auth keys have none). Expiry is a duration (`90s`, `24h`, `7d`; default 90d, at most
 * 365d). Secrets are returned once.
 *
 * An OAuth client (Tailscale API v2) creates auth keys only, and, as in Tailscale, tagged ones:
 * a client has no user to own the devices, so every key it makes carries tags, all of them
 * the client's own.
 */
import {
  type CreateKeyRequest,
  DEFAULT_KEY_LIFETIME,
  type KeyBody,
  MAX_KEY_LIFETIME_MS,
  parseDuration,
  SCOPES,
  type Scope,
} from '@warren/contract';
import { type Actor, systemActor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError, invalidDuration, invalidRequest, notFound } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { newId } from '../../lib/ids.js';
import { listText, parseList } from '../../lib/json.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import type { ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { checkTags, requireOwnedTags } from '../acl/tags.js';
import { findUserId } from '../users/users.repository.js';
import { presentKeptKey, presentKey } from './keys.presenter.js';
import { findKey, insertKey, revokeKey } from './keys.repository.js';

const API_ONLY: (keyof CreateKeyRequest)[] = ['name', 'scopes', 'rateLimit'];
const AUTH_ONLY: (keyof CreateKeyRequest)[] = ['reusable', 'ephemeral', 'preApproved', 'tags', 'user'];

/** Milliseconds of a key's lifetime; the default when absent; 400 when malformed or too long. */
export function keyLifetime(expiresIn: string | undefined): number {
  const text = expiresIn ?? DEFAULT_KEY_LIFETIME;
  const ms = parseDuration(text);
  if (ms === undefined) throw invalidDuration(text);
  if (ms <= 0) throw new ApiError('invalid_duration', `expiresIn must be longer than 0 (got "${text}")`);
  if (ms > MAX_KEY_LIFETIME_MS) throw new ApiError('invalid_duration', `expiresIn may not exceed 365d (got "${text}")`);
  return ms;
}

/** Scopes of `scopes` that a key with `own` does not hold (none when it holds `all`). */
function scopesBeyond(scopes: readonly Scope[], own: readonly Scope[]): Scope[] {
  return own.includes('all') ? [] : scopes.filter((s) => !own.includes(s));
}

const quoted = (scopes: readonly string[]) => scopes.map((s) => `"${s}"`).join(', ');

function checkScopes(requested: readonly string[] | undefined, own: readonly Scope[]): Scope[] {
  if (!requested || requested.length === 0)
    throw invalidRequest(`an API key needs "scopes": one or more of ${SCOPES.join(', ')}`);
  for (const scope of requested) {
    if (!(SCOPES as readonly string[]).includes(scope))
      throw invalidRequest(`"${scope}" is not a scope: use ${SCOPES.join(', ')}`);
  }
  const scopes = [...new Set(requested)] as Scope[];
  const beyond = scopesBeyond(scopes, own);
  if (beyond.length > 0) {
    throw new ApiError(
      'insufficient_scope',
      `a key can only grant scopes it has itself; this key lacks ${quoted(beyond)}`,
      { scope: beyond[0] },
    );
  }
  return scopes;
}

function requireClientTags(clientTags: readonly string[], type: string, tags: readonly string[]): void {
  if (type !== 'auth') throw invalidRequest('an OAuth client creates auth keys only; create API keys with an API key');
  if (clientTags.length === 0) {
    throw invalidRequest(
      'this OAuth client has no tags, so it cannot create auth keys; give it tags (PUT its key) first',
    );
  }
  if (tags.length === 0) {
    throw invalidRequest(
      `an auth key an OAuth client creates must carry tags (its devices have no user): some of ${quoted(clientTags)}`,
    );
  }
  const foreign = tags.filter((t) => !clientTags.includes(t));
  if (foreign.length > 0) {
    throw new ApiError(
      'invalid_tag',
      `an OAuth client can only give auth keys its own tags; it does not have ${quoted(foreign)}`,
    );
  }
}

/** What the caller may grant: the scopes and lifetime of its key (or of a person's role). */
function callerOf(actor: Actor) {
  if (!actor.grant) throw new Error(`actor of type ${actor.type} cannot manage keys`);
  return { networkId: actor.networkId, keyName: actor.name ?? '', ...actor.grant };
}

export async function createKey(ctx: AppContext, actor: Actor, body: CreateKeyRequest): Promise<KeyBody> {
  const principal = callerOf(actor);
  const type = body.type ?? 'auth';
  const misplaced = (type === 'api' ? AUTH_ONLY : API_ONLY).filter((field) => body[field] !== undefined);
  // The body of each type is its own shape: a field of the other one is unknown to it.
  if (misplaced.length > 0) {
    throw new ApiError(
      'unknown_field',
      `${misplaced.map((f) => `"${f}"`).join(', ')} ${misplaced.length > 1 ? 'are' : 'is'} not a field of ${type} keys`,
    );
  }
  if (actor.grant?.oauth) requireClientTags(actor.grant.oauth.tags, type, body.tags ?? []);
  const now = ctx.clock.now();
  let expiresAt = now + keyLifetime(body.expiresIn);
  // Without an explicit expiresIn a key lives as long as the default allows but never past
  // its creator; an explicit longer lifetime is refused instead of shortened.
  if (body.expiresIn === undefined) expiresAt = Math.min(expiresAt, principal.expiresAt);
  let extra: {
    name: string | null;
    scopes: Scope[];
    rate_limit: number | null;
    reusable: number;
    ephemeral: number;
    pre_approved: number;
    tags: string[];
    user_id: string | null;
  };
  if (type === 'api') {
    if (!body.name?.trim()) throw invalidRequest('an API key needs a "name" (it is shown in the audit log)');
    const scopes = checkScopes(body.scopes, principal.scopes);
    if (body.rateLimit !== undefined && !principal.scopes.includes('all')) {
      throw new ApiError('insufficient_scope', 'only a key with scope "all" may set rateLimit', { scope: 'all' });
    }
    extra = {
      name: body.name.trim(),
      scopes,
      rate_limit: body.rateLimit ?? null,
      reusable: 0,
      ephemeral: 0,
      pre_approved: 0,
      tags: [],
      user_id: null,
    };
  } else {
    const tags = checkTags(body.tags ?? []);
    // The devices this key enrolls get its tags, so they must be defined in tagOwners now.
    await requireOwnedTags(ctx.db, principal.networkId, tags);
    let userId: string | null = null;
    if (body.user !== undefined) {
      userId = (await findUserId(ctx.db, principal.networkId, body.user)) ?? null;
      if (!userId) throw invalidRequest(`user "${body.user}" does not exist in this network`);
    } else {
      const owner = await ctx.db
        .selectFrom('users')
        .select('id')
        .where('network_id', '=', principal.networkId)
        .where('role', '=', 'owner')
        .orderBy('created_at')
        .executeTakeFirst();
      userId = owner?.id ?? null;
    }
    extra = {
      name: null,
      scopes: [],
      rate_limit: null,
      reusable: body.reusable ? 1 : 0,
      ephemeral: body.ephemeral ? 1 : 0,
      pre_approved: body.preApproved ? 1 : 0,
      tags,
      user_id: userId,
    };
  }
  if (expiresAt > principal.expiresAt) {
    throw new ApiError(
      'insufficient_scope',
      `a key cannot create a key that outlives it (this one expires ${new Date(principal.expiresAt).toISOString()}); choose a shorter lifetime`,
      { scope: 'keys' },
    );
  }
  const secret = generateSecret(type);
  const row = {
    id: newId('key'),
    network_id: principal.networkId,
    type,
    secret_hash: hashSecret(secret),
    name: extra.name,
    description: body.description ?? '',
    scopes: listText(extra.scopes),
    reusable: extra.reusable,
    ephemeral: extra.ephemeral,
    pre_approved: extra.pre_approved,
    tags: listText(extra.tags),
    user_id: extra.user_id,
    rate_limit: extra.rate_limit,
    created_at: now,
    expires_at: expiresAt,
    revoked_at: null,
    used_at: null,
    uses: 0,
    last_used_at: null,
    created_by: principal.keyName,
  };
  return unitOfWork(ctx, actor, 'key.create', async (trx) => {
    await insertKey(trx, row);
    // The event carries the record without its secret, which is shown once, to the caller.
    const key = presentKey(row, now);
    return { value: presentKey(row, now, secret), target: row.id, events: [{ type: 'key.created', data: { key } }] };
  });
}

export async function getKey(ctx: AppContext, networkId: string, id: string, stamp?: ReadStamp): Promise<KeyBody> {
  const row = await findKey(ctx.db, networkId, id, stamp);
  if (!row) throw notFound(`key ${id} does not exist`);
  return presentKeptKey([row], ctx.clock.now());
}

/**
 * Deleting a key needs every scope it has (or `all`), so a narrower key cannot cut off a
 * wider one: an `acls` + `keys` key cannot revoke the operator's `all` key. Auth keys have no
 * scopes, so any `keys` key may delete them.
 */
export async function deleteKey(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const principal = callerOf(actor);
  const networkId = principal.networkId;
  await unitOfWork(ctx, actor, 'key.delete', async (trx, now) => {
    const row = await findKey(trx, networkId, id);
    if (!row) throw notFound(`key ${id} does not exist`);
    const beyond = scopesBeyond(parseList(row.scopes) as Scope[], principal.scopes);
    if (beyond.length > 0) {
      throw new ApiError(
        'insufficient_scope',
        `a key can only delete keys whose scopes it has itself; key ${id} has ${quoted(beyond)}, which this key lacks`,
        { scope: beyond[0] },
      );
    }
    // Deleting a revoked key again is a 204 but no transition: no second `key.deleted` event.
    if (!(await revokeKey(trx, networkId, id, now))) return { value: undefined, target: id, unchanged: true };
    const key = presentKey({ ...row, revoked_at: now }, now);
    return { value: undefined, target: id, events: [{ type: 'key.deleted', data: { key } }] };
  });
}

/**
 * Operator command (`warren keys set-limit`): raises or lowers an API key's requests per
 * minute, directly on the database, with an audit entry naming the command.
 */
export async function setKeyRateLimit(db: Db, keyId: string, limit: number, now: number): Promise<boolean> {
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000_000) {
    throw new Error(`the limit must be a whole number from 1 to 1000000 (got ${limit})`);
  }
  const key = await db.selectFrom('keys').select(['network_id', 'type']).where('id', '=', keyId).executeTakeFirst();
  if (key?.type !== 'api') return false;
  const clock = { now: () => now };
  await unitOfWork(
    { db, clock },
    systemActor(key.network_id, 'warren keys set-limit'),
    'key.set_limit',
    async (trx) => {
      await trx.updateTable('keys').set({ rate_limit: limit }).where('id', '=', keyId).execute();
      return { value: undefined, target: keyId };
    },
  );
  return true;
}

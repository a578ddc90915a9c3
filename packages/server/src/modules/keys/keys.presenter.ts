/** Rows → API JSON for keys. The secret hash never leaves; the secret only on creation. */
import type { KeyBody, KeyState, Scope } from '@warren/contract';
import type { Selectable } from 'kysely';
import { parseList } from '../../lib/json.js';
import { keptDerivation } from '../../lib/kept.js';
import { iso, isoOrNull } from '../../lib/time.js';
import type { KeysTable } from '../../storage/schema.js';

export type KeyRow = Selectable<KeysTable>;

/** Revoked beats used beats expired: the most final reason a key stopped working. */
export function keyState(
  row: Pick<KeyRow, 'revoked_at' | 'used_at' | 'reusable' | 'type' | 'expires_at'>,
  now: number,
): KeyState {
  if (row.revoked_at != null) return 'revoked';
  if (row.type === 'auth' && !row.reusable && row.used_at != null) return 'used';
  if (row.expires_at <= now) return 'expired';
  return 'valid';
}

export function presentKey(row: KeyRow, now: number, secret?: string): KeyBody {
  const common = {
    id: row.id,
    type: row.type as 'auth' | 'api',
    ...(secret ? { key: secret } : {}),
    description: row.description,
    created: iso(row.created_at),
    expires: iso(row.expires_at),
    state: keyState(row, now),
    uses: row.uses,
    lastUsed: isoOrNull(row.last_used_at),
    createdBy: row.created_by,
  };
  if (row.type === 'api') {
    return {
      ...common,
      name: row.name ?? row.id,
      scopes: parseList(row.scopes) as Scope[],
      ...(row.rate_limit != null ? { rateLimit: row.rate_limit } : {}),
    };
  }
  return {
    ...common,
    scopes: [],
    reusable: row.reusable === 1,
    ephemeral: row.ephemeral === 1,
    preApproved: row.pre_approved === 1,
    tags: parseList(row.tags),
    user: row.user_id,
  };
}

/** When a key's presented state next changes by itself: at its expiry, while it is valid. */
export function keyStateChangesAt(row: KeyRow, now: number): number {
  return keyState(row, now) === 'valid' ? row.expires_at : Number.POSITIVE_INFINITY;
}

/** The first time at which any of `rows` changes state by itself. */
export function firstKeyChange(rows: readonly KeyRow[], now: number): number {
  let first = Number.POSITIVE_INFINITY;
  for (const row of rows) first = Math.min(first, keyStateChangesAt(row, now));
  return first;
}

/**
 * `GET /v1/keys`'s body: presented once per kept answer (lib/kept.ts) and again when a listed
 * key expires, not per call.
 */
export const presentKeyList = keptDerivation(([rows]: readonly [readonly KeyRow[]], now: number) => ({
  value: { keys: rows.map((row) => presentKey(row, now)) },
  until: firstKeyChange(rows, now),
}));

/** One key as presentKey, kept with its row until the row changes or the key expires. */
export const presentKeptKey = keptDerivation(([row]: readonly [KeyRow], now: number) => ({
  value: presentKey(row, now),
  until: keyStateChangesAt(row, now),
}));

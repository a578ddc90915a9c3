/** Rows → API JSON for keys. The secret hash never leaves; the secret only on creation. */
import type { KeyBody, KeyState, Scope } from '@warren/contract';
import type { Selectable } from 'kysely';
import { parseList } from '../../lib/json.js';
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

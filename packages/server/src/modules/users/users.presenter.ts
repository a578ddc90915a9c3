/** Rows → API JSON: the allow-list of what leaves the server about a user. */
import type { Role, UserBody } from '@warren/contract';
import { keptDerivation } from '../../lib/kept.js';
import { iso, isoOrNull } from '../../lib/time.js';
import type { UserRow } from './users.repository.js';

export function presentUser(row: NonNullable<UserRow>): UserBody {
  const seen = Math.max(row.last_seen_at ?? 0, row.devices_seen_at ?? 0);
  return {
    id: row.id,
    loginName: row.login_name,
    displayName: row.display_name,
    role: row.role as Role,
    status: row.status,
    created: iso(row.created_at),
    lastSeen: isoOrNull(seen || null),
    deviceCount: Number(row.device_count),
  };
}

/**
 * `GET /v1/users`'s body, presented once per kept answer (lib/kept.ts): nothing a user shows
 * follows the clock.
 */
export const presentUserList = keptDerivation(([rows]: readonly [readonly NonNullable<UserRow>[]]) => ({
  value: { users: rows.map(presentUser) },
  until: Number.POSITIVE_INFINITY,
}));

/**
 * Whether a user has a device online now (`/api/v2`'s `currentlyConnected`), answered from the
 * user's row where it can be, and by at most one small query where it cannot.
 *
 * The user's row keeps the number of their devices and their latest sighting (migration 026):
 * `devices_seen_at` is written whenever one of their devices' heartbeats enters a new minute of
 * the device's (and, on PostgreSQL, of the user's: migration 033), so the newest heartbeat of any
 * of their devices falls in `devices_seen_at`'s minute or an earlier one. A user with no device, or whose kept sighting's minute ended before the online
 * window began, has no device online, and nothing else is read. Otherwise the rule itself
 * (online.ts) is asked of that user's devices, stopping at the first online one: the kept
 * sighting trails by up to a minute and says nothing of a disconnect, so it cannot decide alone.
 * Asking every listed user's devices on every call read all of a user's devices each time.
 */

import { compiledQuery } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { onlineSince, onlineSinceWhere } from '../network/online.js';

const MINUTE_MS = 60_000;

/** What the user's row keeps of their devices. */
export interface KeptDeviceUsage {
  id: string;
  device_count: number | string | bigint;
  devices_seen_at: number | string | bigint | null;
}

/**
 * False when the user's row proves that none of their devices is online at `now`; true when
 * one may be. The kept sighting `s` was a heartbeat of the minute floor(s / 1 min), and every
 * later heartbeat within or past that minute's end would have written a later one.
 */
export function mayBeConnected(row: KeptDeviceUsage, now: number): boolean {
  if (Number(row.device_count) <= 0 || row.devices_seen_at == null) return false;
  const minuteEnd = (Math.floor(Number(row.devices_seen_at) / MINUTE_MS) + 1) * MINUTE_MS;
  return minuteEnd > onlineSince(now);
}

/** One online device of the user, if any: the (network_id, user_id) index, stopped at the first. */
const anyOnlineDevice = compiledQuery((db, p: { networkId: string; userId: string; cutoff: number }) =>
  db
    .selectFrom('devices')
    .select('devices.id')
    .where('devices.network_id', '=', p.networkId)
    .where('devices.user_id', '=', p.userId)
    .where((eb) => onlineSinceWhere(eb, p.cutoff, true))
    .limit(1),
);

/** Whether the user of `row` has a device online at `now`. */
export async function isUserConnected(db: Db, networkId: string, row: KeptDeviceUsage, now: number): Promise<boolean> {
  if (!mayBeConnected(row, now)) return false;
  const found = await anyOnlineDevice(db, { networkId, userId: row.id, cutoff: onlineSince(now) });
  return found.length > 0;
}

/**
 * Which of the listed users have a device online at `now`: users whose row rules it out are
 * not asked about, the rest in one query per 500 users, each stopped at their first online device.
 */
export async function connectedUsers(db: Db, networkId: string, rows: readonly KeptDeviceUsage[], now: number) {
  const connected = new Set<string>();
  const asked = rows.filter((row) => mayBeConnected(row, now)).map((row) => row.id);
  const cutoff = onlineSince(now);
  // Chunks keep the IN list far below both dialects' parameter limits.
  for (let start = 0; start < asked.length; start += 500) {
    const found = await db
      .selectFrom('users')
      .select('users.id')
      .where('users.network_id', '=', networkId)
      .where('users.id', 'in', asked.slice(start, start + 500))
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('devices')
            .select('devices.id')
            .where('devices.network_id', '=', networkId)
            .whereRef('devices.user_id', '=', 'users.id')
            .where((eb) => onlineSinceWhere(eb, cutoff, true)),
        ),
      )
      .execute();
    for (const row of found) connected.add(row.id);
  }
  return connected;
}

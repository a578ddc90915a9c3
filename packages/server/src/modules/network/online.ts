/**
 * Presence is computed, never stored as a flag that could go stale: a device is online when
 * it has not disconnected and its last heartbeat is younger than ONLINE_WINDOW_MS.
 */
import type { ExpressionBuilder } from 'kysely';
import type { Database } from '../../storage/schema.js';

export const ONLINE_WINDOW_MS = 60_000;
/** An ephemeral device offline this long is removed. */
export const EPHEMERAL_OFFLINE_MS = 10 * 60_000;

/** The online rule, stated once: online at `now` means a heartbeat after this time (and no disconnect). */
export const onlineSince = (now: number): number => now - ONLINE_WINDOW_MS;

/** When a device last heard from at `lastSeenAt` stops counting as online. */
export const onlineUntil = (lastSeenAt: number): number => lastSeenAt + ONLINE_WINDOW_MS;

export function isOnline(row: { disconnected: number; last_seen_at: number | null }, now: number): boolean {
  return row.disconnected === 0 && row.last_seen_at != null && row.last_seen_at > onlineSince(now);
}

/** The SQL twin of isOnline, for filters (`online` true or false) on the `devices` table. */
export function onlineWhere(eb: ExpressionBuilder<Database, 'devices'>, now: number, online: boolean) {
  return onlineSinceWhere(eb, onlineSince(now), online);
}

/** onlineWhere with the cutoff (`onlineSince(now)`) given, for queries built once. */
export function onlineSinceWhere(eb: ExpressionBuilder<Database, 'devices'>, cutoff: number, online: boolean) {
  if (online) return eb.and([eb('devices.disconnected', '=', 0), eb('devices.last_seen_at', '>', cutoff)]);
  return eb.or([
    eb('devices.disconnected', '<>', 0),
    eb('devices.last_seen_at', 'is', null),
    eb('devices.last_seen_at', '<=', cutoff),
  ]);
}

/**
 * Whether a user has a device online now (`/api/v2`'s `currentlyConnected`), answered from the
 * user's row where it can be, and by at most one small query where it cannot.
 *
 * The user's row keeps the number of their devices and their latest sighting (migration 026):
 * `devices_seen_at` is written whenever one of their devices' heartbeats enters a new minute of
 * the device's (and, on PostgreSQL, of the user's: migration 033), so the newest heartbeat of any
 * of their devices falls in `devices_seen_at`'s minute or an earlier one. A user with no device,
 * or whose kept sighting's minute ended before the online window began, has no device online,
 * and nothing else is read. Otherwise the rule itself (online.ts) is asked of the user's
 * devices, stopping at the first online one: the kept sighting trails by up to a minute and says
 * nothing of a disconnect, so it cannot decide alone. That answer is kept (below) until a write
 * could change it or the device it found times out, so a poller's calls in between read nothing.
 */

import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { ONLINE_WINDOW_MS, onlineSince, onlineSinceWhere } from '../network/online.js';

const MINUTE_MS = 60_000;

/** What the user's row keeps of their devices. */
export interface KeptDeviceUsage {
  id: string;
  device_count: number | string | bigint;
  devices_seen_at: number | string | bigint | null;
}

/** The end of the minute of the user's kept sighting: the latest a heartbeat behind it can be. */
function sightingMinuteEnd(row: KeptDeviceUsage): number {
  return (Math.floor(Number(row.devices_seen_at) / MINUTE_MS) + 1) * MINUTE_MS;
}

/**
 * False when the user's row proves that none of their devices is online at `now`; true when
 * one may be. The kept sighting `s` was a heartbeat of the minute floor(s / 1 min), and every
 * later heartbeat within or past that minute's end would have written a later one.
 */
export function mayBeConnected(row: KeptDeviceUsage, now: number): boolean {
  if (Number(row.device_count) <= 0 || row.devices_seen_at == null) return false;
  return sightingMinuteEnd(row) > onlineSince(now);
}

/**
 * The first cutoff at which an answer below may change with nothing committed: the oldest
 * heartbeat among the online devices it found. A user with no device online gains one only
 * by a write (a heartbeat, an enrollment, a reassignment), which moves the device list stamp.
 */
function firstTimeout(rows: readonly { seen: number | string | bigint | null }[]): number {
  let first = Number.POSITIVE_INFINITY;
  for (const row of rows) if (row.seen != null) first = Math.min(first, Number(row.seen));
  return first;
}

/**
 * Kept per read stamp and device list stamp on PostgreSQL (users and devices move them, whoever
 * writes: a heartbeat, a disconnect or a deletion on another instance moves the device list
 * stamp), until the next commit on SQLite, and across the clock until the device found times
 * out: every call in between is answered without a statement.
 */
const stamped = {
  window: { param: 'cutoff', until: firstTimeout },
  stampedBy: 'networkId',
  readsDevices: true,
} as const;

/** One online device of the user, if any: the (network_id, user_id) index, stopped at the first. */
const anyOnlineDevice = compiledQuery(
  (db, p: { networkId: string; userId: string; cutoff: number }) =>
    db
      .selectFrom('devices')
      .select('devices.last_seen_at as seen')
      .where('devices.network_id', '=', p.networkId)
      .where('devices.user_id', '=', p.userId)
      .where((eb) => onlineSinceWhere(eb, p.cutoff, true))
      .limit(1),
  stamped,
);

/**
 * Every user of the network with, for those who have a device online, the heartbeat of one
 * such device (found through the (network_id, user_id) index, stopped at the first): one
 * statement for the whole list, whatever the number of users asked about.
 */
const onlineDeviceOfEachUser = compiledQuery(
  (db, p: { networkId: string; cutoff: number }) =>
    db
      .selectFrom('users')
      .select((eb) => [
        'users.id',
        eb
          .selectFrom('devices')
          .select('devices.last_seen_at')
          .where('devices.network_id', '=', p.networkId)
          .whereRef('devices.user_id', '=', 'users.id')
          .where((inner) => onlineSinceWhere(inner, p.cutoff, true))
          .limit(1)
          .as('seen'),
      ])
      .where('users.network_id', '=', p.networkId),
  stamped,
);

/** Whether the user of `row` has a device online at `now`. */
export async function isUserConnected(
  db: Db,
  networkId: string,
  row: KeptDeviceUsage,
  now: number,
  stamp?: ReadStamp,
): Promise<boolean> {
  if (!mayBeConnected(row, now)) return false;
  const found = await anyOnlineDevice(db, { networkId, userId: row.id, cutoff: onlineSince(now) }, stamp);
  return found.length > 0;
}

/** Per user of the network, the heartbeat of one of their online devices (null: none online). */
export type OnlineDevices = readonly { id: string; seen: number | string | bigint | null }[];

const NOBODY: OnlineDevices = Object.freeze([]);

/**
 * What is needed to tell which of the listed users have a device online at `now`: nothing is
 * read when every listed user's row rules it out; otherwise one statement answers for every user
 * of the network. Either way the same frozen array is returned for as long as it holds, so what
 * is made from it can be kept with it (lib/kept.ts).
 */
export async function onlineDevicesOfUsers(
  db: Db,
  networkId: string,
  rows: readonly KeptDeviceUsage[],
  now: number,
  stamp?: ReadStamp,
): Promise<OnlineDevices> {
  if (!rows.some((row) => mayBeConnected(row, now))) return NOBODY;
  return onlineDeviceOfEachUser(db, { networkId, cutoff: onlineSince(now) }, stamp);
}

/**
 * The listed users with a device online at `now`, by their rows and `online` (read for `now` by
 * onlineDevicesOfUsers), and the first time at which a row may rule a connected user out with
 * nothing written (the online answer itself holds only as long as it is returned).
 */
export function connectedAmong(
  rows: readonly KeptDeviceUsage[],
  online: OnlineDevices,
  now: number,
): { connected: Set<string>; until: number } {
  const seen = new Set<string>();
  for (const user of online) if (user.seen != null) seen.add(user.id);
  const connected = new Set<string>();
  let until = Number.POSITIVE_INFINITY;
  for (const row of rows) {
    if (!seen.has(row.id) || !mayBeConnected(row, now)) continue;
    connected.add(row.id);
    until = Math.min(until, sightingMinuteEnd(row) + ONLINE_WINDOW_MS);
  }
  return { connected, until };
}

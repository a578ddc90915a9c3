/**
 * A device's standing in the network: whether it takes part in netmaps. A device waiting for
 * approval, or whose login expired, gets no peers and is in no one's netmap, whichever
 * protocol it speaks; logging in again (re-enrolling) renews an expired login.
 */
import type { DevicesTable } from '../../storage/schema.js';

type Standing = Pick<DevicesTable, 'expires_at'> & {
  authorized: number;
  key_expiry_disabled: number;
  key_expired: number;
};

/**
 * The stored state, and the clock for the device itself: its own netmap is cut off the moment
 * its login expires, while peers' views follow when the expiry sweep stores it (seconds later).
 */
export function isIsolated(row: Standing, now: number): boolean {
  return row.authorized === 0 || loginExpired(row, now);
}

/** Whether the device's login has expired (stored by the sweep or an admin, or due by the clock). */
export function loginExpired(row: Omit<Standing, 'authorized'>, now: number): boolean {
  if (row.key_expired !== 0) return true;
  return row.key_expiry_disabled === 0 && row.expires_at != null && row.expires_at <= now;
}

/** When a login made now expires under the network's `nodeKeyExpiry` (null: never). */
export function loginExpiry(now: number, lifetimeMs: number): number | null {
  return lifetimeMs > 0 ? now + lifetimeMs : null;
}

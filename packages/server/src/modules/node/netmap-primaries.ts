/**
 * Which router serves each approved, advertised prefix right now. Presence changes with time,
 * not with the netmap epoch, so the assignment is worked out on each request from the approved
 * routes (a small query) and names itself by `key`: the peer map is re-derived only when it moved.
 */
import { isOnline } from '../devices/presence.js';
import { isExitRoute } from '../routes/routes.presenter.js';
import type { ServedRouteRow } from './netmap.repository.js';

/**
 * The routes the peer map is built from: device id → every approved, advertised prefix it
 * serves (`served`, which IP and CIDR selectors match, so a standby router is a peer before it
 * takes over) and those it serves as primary (`byDevice`, which reach allowedIPs). `key` names
 * the assignment.
 */
export interface Primaries {
  byDevice: Map<string, string[]>;
  served: Map<string, string[]>;
  key: string;
}

function pushTo(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Per prefix, the earliest approved route (then the lowest id) whose device is online — the
 * rule the routes presenter's SQL applies. Default routes are not failed over: every online
 * exit node serves them.
 */
export function choosePrimaries(rows: readonly ServedRouteRow[], now: number): Primaries {
  const best = new Map<string, ServedRouteRow>();
  const served = new Map<string, string[]>();
  const servedIds: string[] = [];
  for (const row of rows) {
    pushTo(served, row.device_id, row.prefix);
    servedIds.push(row.id);
    if (!isOnline(row, now)) continue;
    if (isExitRoute(row.prefix)) {
      best.set(`${row.prefix} ${row.id}`, row);
      continue;
    }
    const current = best.get(row.prefix);
    const at = Number(row.approved_at ?? 0);
    const currentAt = Number(current?.approved_at ?? 0);
    if (!current || at < currentAt || (at === currentAt && row.id < current.id)) best.set(row.prefix, row);
  }
  const byDevice = new Map<string, string[]>();
  const ids: string[] = [];
  for (const row of best.values()) {
    ids.push(row.id);
    pushTo(byDevice, row.device_id, row.prefix);
  }
  for (const list of byDevice.values()) list.sort();
  for (const list of served.values()) list.sort();
  return { byDevice, served, key: `${ids.sort().join(',')}|${servedIds.sort().join(',')}` };
}

/**
 * Which router serves each approved, advertised prefix right now. Presence changes with time,
 * not with the netmap epoch, so the assignment is read on each request with the approved routes
 * (a small query) and names itself by `key`: the peer map is re-derived only when it moved.
 */
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
 * The assignment of the routes `rows` lists: which of them each device serves, and those it
 * serves as primary — as each row says (routes.repository.ts primaryFlag states the rule).
 */
export function primariesOf(rows: readonly ServedRouteRow[]): Primaries {
  // A kept answer (storage/compiled-query.ts) is one frozen array shared by every call that
  // gets it, every heartbeat's among them: its assignment is worked out once.
  let primaries = derived.get(rows);
  if (!primaries) {
    primaries = assignment(rows);
    if (Object.isFrozen(rows)) derived.set(rows, primaries);
  }
  return primaries;
}

const derived = new WeakMap<readonly ServedRouteRow[], Primaries>();

function assignment(rows: readonly ServedRouteRow[]): Primaries {
  const served = new Map<string, string[]>();
  const byDevice = new Map<string, string[]>();
  const servedIds: string[] = [];
  const primaryIds: string[] = [];
  for (const row of rows) {
    pushTo(served, row.device_id, row.prefix);
    servedIds.push(row.id);
    if (Number(row.is_primary) !== 1) continue;
    pushTo(byDevice, row.device_id, row.prefix);
    primaryIds.push(row.id);
  }
  for (const list of byDevice.values()) list.sort();
  for (const list of served.values()) list.sort();
  return { byDevice, served, key: `${primaryIds.sort().join(',')}|${servedIds.sort().join(',')}` };
}

/**
 * The network's routes as a detail list shows them (`?fields=all`, `/api/v2`'s device list):
 * each with its primary flag, by device, and as one text that the kept bodies and records are
 * compared by. Every detail list read them on every call, even when its kept body answered:
 * about a quarter of the CPU such a call took at 1,000 devices.
 *
 * They are kept per stamp of what they show, which the list reads anyway (storage/compiled-query.ts):
 * on SQLite the network's route counter and device cursor (migrations 038 and 012), from the
 * statement the device index makes once per commit; on PostgreSQL the read stamp, which routes
 * move (migration 034), read with the device list stamp in the list's one statement. Each moves
 * in the writer's own transaction, whoever writes, so a route approved, withdrawn or removed
 * and a device seen, approved, expired or deleted, through any instance, reach the next list.
 *
 * What moves a primary with nothing written is the clock: a router's heartbeat grows old. The
 * routes are read with the first online cutoff at which any primary flag could change
 * (primaryChangesAt), and are read again once the clock reaches it.
 *
 * Grouped and written as text once per answer read (lib/kept.ts), not per call.
 */
import { keptDerivation } from '../../lib/kept.js';
import type { ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { groupByDevice } from './device-details.js';
import { type RoutesByDevice, routesText } from './device-records.js';
import { type NetworkRouteRow, routesOfNetwork } from './devices.repository.js';

export interface NetworkRoutes {
  byDevice: RoutesByDevice;
  /** Everything the routes show, as text (routesText): equal text, equal routes. */
  text: string;
}

const shown = keptDerivation(([rows]: readonly [readonly NetworkRouteRow[]]) => ({
  value: { byDevice: groupByDevice(rows), text: routesText(rows) },
  // The rows themselves are read again when the clock passes their window.
  until: Number.POSITIVE_INFINITY,
}));

/** The network's routes at `now`, kept while `stamp` stands for them (none: read per call). */
export async function networkRoutes(
  db: Db,
  networkId: string,
  now: number,
  stamp: ReadStamp | undefined,
): Promise<NetworkRoutes> {
  return shown([await routesOfNetwork(db, networkId, now, stamp)], now);
}

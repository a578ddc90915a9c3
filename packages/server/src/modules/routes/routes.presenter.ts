/** Rows → API JSON: the allow-list of what leaves the server about a route. */
import type { DeviceRouteBody, RouteBody, RouteState } from '@warren/contract';
import { keptDerivation } from '../../lib/kept.js';
import { iso, isoOrNull } from '../../lib/time.js';
import type { RouteRow } from './routes.repository.js';

/** The default routes: a device advertising both offers itself as an exit node. */
export const EXIT_ROUTES: readonly string[] = ['0.0.0.0/0', '::/0'];

export const isExitRoute = (prefix: string): boolean => EXIT_ROUTES.includes(prefix);

/** Serves as an exit node: both default routes approved and advertised. */
export function servesAsExitNode(routes: readonly RouteRow[]): boolean {
  const live = routes.filter((r) => r.state === 'approved' && r.advertised !== 0).map((r) => r.prefix);
  return EXIT_ROUTES.every((p) => live.includes(p));
}

export function presentRoute(row: RouteRow): RouteBody {
  return {
    id: row.id,
    deviceId: row.device_id,
    deviceName: row.device_name,
    prefix: row.prefix,
    state: row.state as RouteState,
    advertised: row.advertised !== 0,
    autoApproved: row.auto_approved !== 0,
    primary: Number(row.is_primary) === 1,
    exitNode: isExitRoute(row.prefix),
    approvedAt: isoOrNull(row.approved_at),
    approvedBy: row.approved_by,
    created: iso(row.created_at),
  };
}

/** The short form inside a device's detail record. */
export function presentDeviceRoute(row: RouteRow): DeviceRouteBody {
  return {
    id: row.id,
    prefix: row.prefix,
    state: row.state as RouteState,
    advertised: row.advertised !== 0,
    primary: Number(row.is_primary) === 1,
    exitNode: isExitRoute(row.prefix),
  };
}

/** `GET /v1/routes`'s body, once per kept answer (lib/kept.ts): nothing in it follows the clock but the rows. */
export const presentRouteList = keptDerivation(([rows]: readonly [readonly RouteRow[]]) => ({
  value: { routes: rows.map(presentRoute) },
  until: Number.POSITIVE_INFINITY,
}));

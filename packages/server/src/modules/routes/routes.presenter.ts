/** Rows → API JSON: the allow-list of what leaves the server about a route. */
import type { DeviceRouteBody, RouteBody, RouteState } from '@warren/contract';
import { iso, isoOrNull } from '../../lib/time.js';
import type { RouteRow } from './routes.repository.js';

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
  };
}

/**
 * Rows → API JSON: the allow-list of what leaves the server about a device. The node
 * credential's hash, the node key and internal counters never appear here.
 */
import type { DeviceBody } from '@warren/contract';
import { parseList } from '../../lib/json.js';
import { iso, isoOrNull } from '../../lib/time.js';
import { isOnline } from '../network/online.js';
import { presentDeviceRoute, servesAsExitNode } from '../routes/routes.presenter.js';
import type { RouteRow } from '../routes/routes.repository.js';
import { addressesOf } from './addresses.js';
import type { DeviceRow } from './devices.repository.js';

/** The list record (`GET /v1/devices`). */
export function presentDevice(row: DeviceRow, now: number): DeviceBody {
  return {
    id: row.id,
    name: row.name,
    hostname: row.hostname,
    os: row.os,
    online: isOnline(row, now),
    user: row.user_id && row.user_login !== null ? { id: row.user_id, loginName: row.user_login } : null,
    tags: parseList(row.tags),
    created: iso(row.created_at),
    lastSeen: isoOrNull(row.last_seen_at),
  };
}

/** The detail record (`GET /v1/devices/{id}`, `?fields=all`, enrollment). */
export function presentDeviceDetail(row: DeviceRow, now: number, routes: readonly RouteRow[]): DeviceBody {
  return {
    ...presentDevice(row, now),
    addresses: addressesOf(Number(row.addr_index)),
    routes: routes.map(presentDeviceRoute),
    clientVersion: row.client_version,
    keyId: row.key_id,
    ephemeral: row.ephemeral !== 0,
    // Devices do not expire on their own yet (no key expiry for nodes): always null.
    expires: isoOrNull(row.expires_at),
    exitNode: servesAsExitNode(routes),
  };
}

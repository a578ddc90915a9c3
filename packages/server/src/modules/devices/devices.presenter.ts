/**
 * Rows → API JSON: the allow-list of what leaves the server about a device. The node
 * credential's hash and internal counters never appear here. The device's public keys are not
 * in /v1's shapes; a detail record carries them under a symbol, which no JSON of it shows, for
 * `/api/v2`'s device (Tailscale's `nodeKey` and `machineKey`).
 */
import { type DeviceBody, dnsDomain } from '@warren/contract';
import { parseList } from '../../lib/json.js';
import { iso, isoOrNull } from '../../lib/time.js';
import { isOnline } from '../network/online.js';
import { presentDeviceRoute, servesAsExitNode } from '../routes/routes.presenter.js';
import type { RouteRow } from '../routes/routes.repository.js';
import { addressesOf } from './addresses.js';
import type { DeviceRow } from './devices.repository.js';

/** The public keys a device registered with, in Tailscale's text form ('' for none). */
export interface DeviceKeys {
  /** `nodekey:<hex>`: every device has one, native devices too (their WireGuard key). */
  nodeKey: string;
  /** `mkey:<hex>`, the key of the device's Noise session: only devices of Tailscale's protocol. */
  machineKey: string;
  /** Whether it reports SSH host keys, as a Tailscale client running Tailscale SSH does. */
  sshHostKeys: boolean;
}

/**
 * Where a detail record carries its device's keys. A symbol, so that the record's JSON on /v1,
 * in events and in webhooks stays as it was, while the record (and its copies as presence moves,
 * device-records.ts) brings them to `/api/v2` with no read of its own.
 */
export const DEVICE_KEYS = Symbol('device keys');

/** A detail record, with its device's keys when it was presented from the device's row. */
export type DeviceDetailRecord = DeviceBody & { [DEVICE_KEYS]?: DeviceKeys };

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
    authorized: row.authorized !== 0,
    keyExpiry: row.key_expiry_disabled !== 0 ? null : isoOrNull(row.expires_at),
    keyExpiryDisabled: row.key_expiry_disabled !== 0,
    // The stored state, which the expiry sweep sets within seconds of expires_at (a record is
    // kept between lists by its version, so it must not depend on the clock).
    keyExpired: row.key_expired !== 0,
  };
}

/** The detail record (`GET /v1/devices/{id}`, `?fields=all`, enrollment). */
export function presentDeviceDetail(row: DeviceRow, now: number, routes: readonly RouteRow[]): DeviceDetailRecord {
  return {
    ...presentDevice(row, now),
    addresses: addressesOf(Number(row.addr_index)),
    routes: routes.map(presentDeviceRoute),
    clientVersion: row.client_version,
    keyId: row.key_id,
    ephemeral: row.ephemeral !== 0,
    expires: isoOrNull(row.expires_at),
    exitNode: servesAsExitNode(routes),
    protocol: row.protocol as DeviceBody['protocol'],
    dnsName: `${row.name}.${row.network_dns_domain ?? dnsDomain(row.network_name)}`,
    [DEVICE_KEYS]: { nodeKey: row.node_key, machineKey: row.machine_key ?? '', sshHostKeys: row.ssh_enabled !== 0 },
  };
}

/**
 * Warren's device detail record → Tailscale's `Device`, field for field as the Go client
 * declares it. Lists are never null, routes are sorted; what Warren does not have is its zero
 * value (`blocksIncomingConnections: false`, an empty tailnet lock key). The node and machine
 * keys come with the detail record (DEVICE_KEYS); a native device has no machine key, and shows
 * '' as Tailscale's API does for a device without one. A time that does not exist is
 * Tailscale's zero time, as its API sends for a device whose key never expires; `lastSeen` is
 * left out while the device is connected, as Tailscale leaves it out.
 */
import type { DeviceBody } from '@warren/contract';
import { DEVICE_KEYS, type DeviceDetailRecord } from '../../modules/devices/devices.presenter.js';
import { tailscaleTime } from './times.js';

const ZERO_TIME = '0001-01-01T00:00:00Z';

export function advertisedRoutes(device: DeviceBody): string[] {
  return (device.routes ?? [])
    .filter((r) => r.advertised)
    .map((r) => r.prefix)
    .sort();
}

export function enabledRoutes(device: DeviceBody): string[] {
  return (device.routes ?? [])
    .filter((r) => r.state === 'approved')
    .map((r) => r.prefix)
    .sort();
}

export function presentTailscaleDevice(device: DeviceDetailRecord, allFields: boolean) {
  const keys = device[DEVICE_KEYS];
  const record = {
    addresses: device.addresses ?? [],
    id: device.id,
    nodeId: device.id,
    name: device.name,
    hostname: device.hostname,
    user: device.user?.loginName ?? '',
    tags: device.tags,
    authorized: device.authorized,
    keyExpiryDisabled: device.keyExpiryDisabled,
    blocksIncomingConnections: false,
    clientVersion: device.clientVersion ?? '',
    updateAvailable: false,
    os: device.os,
    created: tailscaleTime(device.created),
    expires: device.keyExpiry ? tailscaleTime(device.keyExpiry) : ZERO_TIME,
    // As Tailscale's API: lastSeen only while the device is not connected.
    ...(device.online || device.lastSeen === null ? {} : { lastSeen: tailscaleTime(device.lastSeen) }),
    connectedToControl: device.online,
    isEphemeral: device.ephemeral ?? false,
    isExternal: false,
    multipleConnections: false,
    machineKey: keys?.machineKey ?? '',
    nodeKey: keys?.nodeKey ?? '',
    tailnetLockKey: '',
    tailnetLockError: '',
  };
  if (!allFields) return record;
  return {
    ...record,
    advertisedRoutes: advertisedRoutes(device),
    enabledRoutes: enabledRoutes(device),
    // As Tailscale's: whether the device's Hostinfo carries SSH host keys (it runs Tailscale
    // SSH). No posture identity collection in Warren: what Tailscale shows then.
    sshEnabled: keys?.sshHostKeys ?? false,
    postureIdentity: { disabled: true },
    clientConnectivity: {
      endpoints: [],
      derp: '',
      mappingVariesByDestIP: false,
      latency: {},
      clientSupports: { hairPinning: false, ipv6: false, pcp: false, pmp: false, udp: false, upnp: false },
    },
  };
}

/**
 * The device list's filters, as Tailscale's Go client and Terraform provider send them: every
 * query parameter but `fields` names a top-level property of the device (`os`, `hostname`,
 * `user`, `authorized`, `isEphemeral`, `clientVersion`, …) with the values it may take.
 *
 * - A plain property matches when it equals one of the values (repeated parameters, or one
 *   comma-separated, are alternatives: the client's "permitted matches"); a boolean's values
 *   must be `true` or `false`.
 * - `name` matches Warren's name or the MagicDNS name (`web.example.warren.internal`, a final
 *   dot allowed), which is what Tailscale calls a device's name: Terraform's `tailscale_device`
 *   looks a device up by that full name.
 * - A list property matches when it holds every value, as `tags` does in `/v1` (tags are
 *   selected through the kept lists, the rest here on the records).
 * - A parameter that names no property, or one that is an object, is refused rather than
 *   ignored: ignoring it would answer devices the caller meant to leave out.
 */
import type { DeviceBody } from '@warren/contract';
import { invalidRequest } from '../problem.js';
import { presentTailscaleDevice } from './devices.presenter.js';

type Query = Record<string, string | string[] | undefined>;
type TailscaleDevice = ReturnType<typeof presentTailscaleDevice>;

/** Not filters: what the list shows (`fields`). */
const NOT_FILTERS = new Set(['fields']);

/**
 * Every top-level property of Tailscale's device record (all fields), and what kind of value it
 * holds, read off the presenter's own record of an empty device so the two cannot part.
 */
const PROPERTIES: ReadonlyMap<string, 'string' | 'boolean' | 'list' | 'object'> = (() => {
  const sample = presentTailscaleDevice(
    {
      id: '',
      name: '',
      hostname: '',
      os: '',
      online: false,
      user: null,
      tags: [],
      created: '',
      // Offline and seen, so that lastSeen is among the properties.
      lastSeen: '',
      authorized: true,
      keyExpiry: null,
      keyExpiryDisabled: false,
    } as unknown as DeviceBody,
    true,
  );
  const kinds = new Map<string, 'string' | 'boolean' | 'list' | 'object'>();
  for (const [key, value] of Object.entries(sample)) {
    if (Array.isArray(value)) kinds.set(key, 'list');
    else if (typeof value === 'boolean') kinds.set(key, 'boolean');
    else if (value !== null && typeof value === 'object') kinds.set(key, 'object');
    else kinds.set(key, 'string');
  }
  return kinds;
})();

/** One parameter's values: repeated, comma-separated or both; empty ones dropped. */
export const valuesOf = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(',')).filter(Boolean);

export interface DeviceFilters {
  /** Tags every listed device must carry (selected through the kept lists). */
  tags: string[];
  /** The other filters, as a predicate on the record, and a stable name for the kept body. */
  shows?: (device: DeviceBody) => boolean;
  name: string;
}

export function deviceFilters(query: Query): DeviceFilters {
  const checks: [string, 'string' | 'boolean' | 'list', string[]][] = [];
  for (const key of Object.keys(query).sort()) {
    if (NOT_FILTERS.has(key) || key === 'tags') continue;
    const kind = PROPERTIES.get(key);
    if (kind === undefined) throw invalidRequest(`devices have no property "${key}" to filter on`);
    if (kind === 'object') throw invalidRequest(`"${key}" is an object: filter on a property that holds a value`);
    const values = valuesOf(query[key]);
    if (values.length === 0) continue;
    if (kind === 'boolean' && values.some((v) => v !== 'true' && v !== 'false')) {
      throw invalidRequest(`${key} must be true or false (got "${values.join(',')}")`);
    }
    checks.push([key, kind, values]);
  }
  const tags = valuesOf(query.tags);
  if (checks.length === 0) return { tags, name: '' };
  const matches = (device: DeviceBody, record: TailscaleDevice) =>
    checks.every(([key, kind, values]) => {
      const value = record[key as keyof TailscaleDevice];
      if (kind === 'list') return values.every((v) => (value as readonly string[]).includes(v));
      if (key === 'name') return values.some((v) => v === value || v.replace(/\.$/, '') === device.dnsName);
      return values.includes(String(value));
    });
  return {
    tags,
    shows: (device) => matches(device, presentTailscaleDevice(device, true)),
    name: JSON.stringify(checks),
  };
}

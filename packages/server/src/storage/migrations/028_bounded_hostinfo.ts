/**
 * A Tailscale client's Hostinfo is kept field by field within bounds since map requests were
 * bounded (control/tailscale/map-request.ts); rows written before that hold whatever the client
 * sent, up to the 1 MiB body limit, and every peer's map carried it until the device's next map
 * request. This rewrites every such row through the same bounds once, so the read path (each
 * peer of each map) needs no second check.
 *
 * The bounding is a frozen copy of keptHostinfo as it was when this migration was written: a
 * migration must do the same thing on every database it ever runs on, whatever the live code
 * later becomes. A value that is not a JSON object (never written by Warren) becomes null,
 * which peers see as an empty Hostinfo, as they did before.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Db = Kysely<Database>;

/** Rows read at a time: each Hostinfo may be up to 1 MiB, so a batch holds at most a few dozen. */
const BATCH = 32;

const TEXT_FIELDS: Record<string, number> = {
  IPNVersion: 64,
  FrontendLogID: 128,
  BackendLogID: 128,
  OS: 32,
  OSVersion: 255,
  Env: 64,
  Distro: 64,
  DistroVersion: 64,
  DistroCodeName: 64,
  App: 64,
  Package: 64,
  DeviceModel: 255,
  Hostname: 63,
  Machine: 64,
  GoArch: 32,
  GoArchVar: 32,
  GoVersion: 64,
  Cloud: 64,
  ServicesHash: 128,
  ExitNodeID: 64,
};
const FLAG_FIELDS = [
  'Container',
  'Desktop',
  'ShieldsUp',
  'ShareeNode',
  'NoLogsNoSupport',
  'WireIngress',
  'IngressEnabled',
  'AllowsUpdate',
  'PeerRelay',
  'StateEncrypted',
];
const LIST_FIELDS: Record<string, { entries: number; length: number }> = {
  RoutableIPs: { entries: 256, length: 64 },
  RequestTags: { entries: 64, length: 128 },
  WoLMACs: { entries: 10, length: 32 },
};
const MAX_SERVICES = 32;
const MAX_SERVICE_TEXT = 64;
const LOCATION_TEXT = ['Country', 'CountryCode', 'City', 'CityCode'];
const LOCATION_NUMBERS = ['Latitude', 'Longitude', 'Priority'];

const textWithin = (value: unknown, max: number): value is string => typeof value === 'string' && value.length <= max;

function service(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { Proto, Port, Description } = value as Record<string, unknown>;
  if (!textWithin(Proto, 16) || typeof Port !== 'number') return undefined;
  return { Proto, Port, ...(textWithin(Description, MAX_SERVICE_TEXT) && { Description }) };
}

function location(value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const given = value as Record<string, unknown>;
  const kept: Record<string, unknown> = {};
  for (const field of LOCATION_TEXT) if (textWithin(given[field], MAX_SERVICE_TEXT)) kept[field] = given[field];
  for (const field of LOCATION_NUMBERS) if (typeof given[field] === 'number') kept[field] = given[field];
  return kept;
}

function kept(hostinfo: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, max] of Object.entries(TEXT_FIELDS)) {
    if (textWithin(hostinfo[field], max)) out[field] = hostinfo[field];
  }
  for (const field of FLAG_FIELDS) if (typeof hostinfo[field] === 'boolean') out[field] = hostinfo[field];
  for (const [field, bound] of Object.entries(LIST_FIELDS)) {
    const list = hostinfo[field];
    if (Array.isArray(list) && list.length <= bound.entries && list.every((item) => textWithin(item, bound.length)))
      out[field] = list;
  }
  if (Array.isArray(hostinfo.Services)) {
    out.Services = hostinfo.Services.slice(0, MAX_SERVICES)
      .map(service)
      .filter((entry) => entry !== undefined);
  }
  const where = location(hostinfo.Location);
  if (where) out.Location = where;
  return out;
}

/** The stored text bounded, or null when it is not a JSON object. */
function bounded(text: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  return JSON.stringify(kept(value as Record<string, unknown>));
}

export async function up(migrating: Kysely<unknown>): Promise<void> {
  // Migrations are written against no schema type; at this point the tables are those of Database.
  const db = migrating as unknown as Db;
  let after = '';
  for (;;) {
    const rows = await db
      .selectFrom('devices')
      .select(['id', 'hostinfo'])
      .where('hostinfo', 'is not', null)
      .where('id', '>', after)
      .orderBy('id')
      .limit(BATCH)
      .execute();
    for (const row of rows) {
      const text = row.hostinfo as string;
      const next = bounded(text);
      if (next === text) continue;
      await db.updateTable('devices').set({ hostinfo: next }).where('id', '=', row.id).execute();
    }
    if (rows.length < BATCH) return;
    after = rows[rows.length - 1].id;
  }
}

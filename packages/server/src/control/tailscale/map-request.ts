/**
 * The parts of tailcfg.MapRequest and tailcfg.Hostinfo Warren reads, and what it keeps of them.
 */
import type { Reported } from '../../modules/devices/device-reports.js';
import { advertisablePrefixes } from '../../modules/routes/prefixes.js';

export interface Hostinfo {
  Hostname?: string;
  OS?: string;
  IPNVersion?: string;
  RoutableIPs?: string[] | null;
  RequestTags?: string[] | null;
  NetInfo?: { PreferredDERP?: number } | null;
  [field: string]: unknown;
}

export interface MapRequest {
  Version?: number;
  NodeKey: string;
  DiscoKey?: string;
  Endpoints?: string[] | null;
  Stream?: boolean;
  OmitPeers?: boolean;
  Hostinfo?: Hostinfo | null;
}

/**
 * What Warren keeps of a Hostinfo, field by field, with the largest value it keeps: everything
 * else a client sends (NetInfo, push tokens, TPM details, fields newer clients add) is left out, so a map request of up to 1 MiB stores and fans out to peers at most a few KiB.
 * Strings are bounded by what real clients send (a hostname is a DNS label, 63, as the device's
 * name; versions and identifiers fit in 255, as tailscale.com's own hostname and OS limits); a
 * value past its bound or of the wrong type is dropped rather than cut, since a cut log id or
 * version would be a wrong one. `Services` is kept: peers find each other's peer API (DNS through
 * an exit node, pings) by its ports there.
 */
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
/** Lists already bounded in count by `listProblem`; each entry is a tag, prefix or MAC address. */
const LIST_FIELDS: Record<string, { entries: number; length: number }> = {
  RoutableIPs: { entries: 256, length: 64 },
  RequestTags: { entries: 64, length: 128 },
  WoLMACs: { entries: 10, length: 32 },
  // The public host keys of a device running Tailscale SSH, one per algorithm in authorized_keys
  // form (an RSA 4096 key is about 740 characters): peers' `tailscale ssh` trusts only these.
  sshHostKeys: { entries: 8, length: 2048 },
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

/** The bounded copy of a Hostinfo that is stored and shown to peers. */
export function keptHostinfo(hostinfo: Hostinfo): Record<string, unknown> {
  const kept: Record<string, unknown> = {};
  for (const [field, max] of Object.entries(TEXT_FIELDS)) {
    if (textWithin(hostinfo[field], max)) kept[field] = hostinfo[field];
  }
  for (const field of FLAG_FIELDS) if (typeof hostinfo[field] === 'boolean') kept[field] = hostinfo[field];
  for (const [field, bound] of Object.entries(LIST_FIELDS)) {
    const list = hostinfo[field];
    if (Array.isArray(list) && list.length <= bound.entries && list.every((item) => textWithin(item, bound.length)))
      kept[field] = list;
  }
  if (Array.isArray(hostinfo.Services)) {
    kept.Services = hostinfo.Services.slice(0, MAX_SERVICES)
      .map(service)
      .filter((entry) => entry !== undefined);
  }
  const where = location(hostinfo.Location);
  if (where) kept.Location = where;
  return kept;
}

/** A reported text, trimmed and bounded as at registration; absent or blank: not reported. */
function reportedText(text: unknown, max: number): string | undefined {
  if (typeof text !== 'string') return undefined;
  const t = text.trim();
  return t ? t.slice(0, max) : undefined;
}

export function reportOf(request: MapRequest): Reported {
  const hostinfo = request.Hostinfo;
  let kept: string | null = null;
  if (hostinfo) {
    kept = JSON.stringify(keptHostinfo(hostinfo));
  }
  return {
    discoKey: request.DiscoKey ?? '',
    endpoints: (request.Endpoints ?? []).join(','),
    homeDerp: hostinfo?.NetInfo?.PreferredDERP ?? 0,
    hostinfo: kept,
    hostname: reportedText(hostinfo?.Hostname, 63),
    os: reportedText(hostinfo?.OS, 32),
    clientVersion: reportedText(hostinfo?.IPNVersion, 64),
  };
}

/**
 * Lists a client sends that the server sorts, stores or compares: bounded as the API bounds
 * the same lists (64 tags, 256 prefixes), far above what tailscaled sends, so that one
 * request of up to 1 MiB cannot make every later step work on a hundred thousand entries.
 */
const LIST_LIMITS = { RequestTags: 64, RoutableIPs: 256, Endpoints: 64 } as const;

/** Why a register or map request's lists are refused, or undefined when they are within bounds. */
export function listProblem(request: MapRequest): string | undefined {
  const lists: Record<keyof typeof LIST_LIMITS, unknown> = {
    RequestTags: request.Hostinfo?.RequestTags,
    RoutableIPs: request.Hostinfo?.RoutableIPs,
    Endpoints: request.Endpoints,
  };
  for (const [name, limit] of Object.entries(LIST_LIMITS) as Array<[keyof typeof LIST_LIMITS, number]>) {
    const list = lists[name];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list) || list.some((item) => typeof item !== 'string'))
      return `${name} is not a list of strings`;
    if (list.length > limit) return `${name} has ${list.length} entries; at most ${limit} are accepted`;
  }
  return undefined;
}

/**
 * The routes the client advertises (`--advertise-routes`, `--advertise-exit-node`) that Warren
 * takes; absent: unknown. Those it does not take are left out rather than refusing the request
 * (routes/prefixes.ts, advertisablePrefixes), so the device stays connected.
 */
export function advertisedRoutes(request: MapRequest): string[] | undefined {
  if (!request.Hostinfo) return undefined;
  return advertisablePrefixes(request.Hostinfo.RoutableIPs ?? []);
}

/**
 * The parts of tailcfg.MapRequest and tailcfg.Hostinfo Warren reads, and what it keeps of them.
 */
import type { Reported } from '../../modules/devices/device-reports.js';

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
 * Hostinfo fields that are large or only for Tailscale's own service are not kept. `Services`
 * is: peers find each other's peer API (DNS through an exit node, pings) by its ports there.
 */
const DROPPED = ['NetInfo', 'SSH_HostKeys', 'Userspace', 'UserspaceRouter', 'AppConnector'];
const MAX_SERVICES = 32;

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
    const copy: Record<string, unknown> = { ...hostinfo };
    for (const field of DROPPED) delete copy[field];
    if (Array.isArray(copy.Services)) copy.Services = copy.Services.slice(0, MAX_SERVICES);
    kept = JSON.stringify(copy);
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

/** The routes the client advertises (`--advertise-routes`, `--advertise-exit-node`); absent: unknown. */
export function advertisedRoutes(request: MapRequest): string[] | undefined {
  if (!request.Hostinfo) return undefined;
  return request.Hostinfo.RoutableIPs ?? [];
}

/**
 * The parts of tailcfg.MapRequest and tailcfg.Hostinfo Warren reads, and what it keeps of them.
 */
import type { Reported } from './tailscale.repository.js';

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

/** Hostinfo fields that are large or only for Tailscale's own service are not kept. */
const DROPPED = ['Services', 'NetInfo', 'SSH_HostKeys', 'Userspace', 'UserspaceRouter', 'AppConnector'];

export function reportOf(request: MapRequest): Reported {
  const hostinfo = request.Hostinfo;
  let kept: string | null = null;
  if (hostinfo) {
    const copy: Record<string, unknown> = { ...hostinfo };
    for (const field of DROPPED) delete copy[field];
    kept = JSON.stringify(copy);
  }
  return {
    discoKey: request.DiscoKey ?? '',
    endpoints: (request.Endpoints ?? []).join(','),
    homeDerp: hostinfo?.NetInfo?.PreferredDERP ?? 0,
    hostinfo: kept,
  };
}

/** The routes the client advertises (`--advertise-routes`, `--advertise-exit-node`); absent: unknown. */
export function advertisedRoutes(request: MapRequest): string[] | undefined {
  if (!request.Hostinfo) return undefined;
  return request.Hostinfo.RoutableIPs ?? [];
}

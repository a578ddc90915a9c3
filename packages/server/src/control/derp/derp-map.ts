/**
 * The embedded relay as one region of a Tailscale DERP map (`tailcfg.DERPRegion`, field names as
 * the client decodes them). Devices reach it at the server's public URL: `https://` URLs on port
 * 443 by default; a plain `http://` relay is only used by clients started with
 * `TS_DEBUG_USE_DERP_HTTP=1` (tests, and networks that terminate TLS nowhere).
 */
import { isIPv4, isIPv6 } from 'node:net';
import { EMBEDDED_DERP_REGION_ID as EMBEDDED_REGION_ID } from '@warren/contract';

export interface DerpNode {
  Name: string;
  RegionID: number;
  HostName: string;
  IPv4?: string;
  IPv6?: string;
  DERPPort?: number;
  /** 0 means 3478; -1 means the node answers no STUN. */
  STUNPort?: number;
}

export interface DerpRegion {
  RegionID: number;
  RegionCode: string;
  RegionName: string;
  Nodes: DerpNode[];
}

export interface EmbeddedRelayAddress {
  /** Where devices reach the server, e.g. `https://warren.example.com` or `http://192.0.2.1:8080`. */
  publicUrl: string;
  /** The UDP port of the STUN responder, or undefined when none runs. */
  stunPort: number | undefined;
}

export function embeddedRegion({ publicUrl, stunPort }: EmbeddedRelayAddress): DerpRegion {
  const url = new URL(publicUrl);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const port = url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
  const node: DerpNode = {
    Name: `${EMBEDDED_REGION_ID}a`,
    RegionID: EMBEDDED_REGION_ID,
    HostName: host,
    DERPPort: port,
    STUNPort: stunPort ?? -1,
  };
  // An address as host name: say so, or the client would look it up in DNS.
  if (isIPv4(host)) node.IPv4 = host;
  if (isIPv6(host)) node.IPv6 = host;
  return { RegionID: EMBEDDED_REGION_ID, RegionCode: 'warren', RegionName: 'Warren embedded relay', Nodes: [node] };
}

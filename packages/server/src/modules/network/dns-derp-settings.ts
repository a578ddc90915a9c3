/**
 * A network's DNS and relay settings (PATCH /v1/network `dns` and `derp`), as stored in
 * `networks.dns_domain`, `networks.dns` and `networks.derp` (migration 025) and as the API
 * shows them. Defaults, as Tailscale's: MagicDNS on, no nameservers or search domains; the
 * embedded relay in the DERP map when the server runs one, no other regions.
 *
 * A PATCH merges: a field left out keeps its value, `domain: null` goes back to the default.
 */
import { isIP } from 'node:net';
import { type DerpRegionBody, EMBEDDED_DERP_REGION_ID, type PatchNetworkRequest } from '@warren/contract';
import { invalidRequest } from '../../core/errors.js';
import { dnsDomain } from './dns-domain.js';

export interface DnsSettings {
  domain: string;
  magicDns: boolean;
  nameservers: string[];
  searchDomains: string[];
}

export interface DerpSettings {
  embedded: boolean;
  regions: DerpRegionBody[];
}

/** The network columns these settings are read from. */
export interface DnsDerpColumns {
  name: string;
  dns_domain: string | null;
  dns: string | null;
  derp: string | null;
}

type StoredDns = Omit<DnsSettings, 'domain'>;

const DEFAULT_DNS: StoredDns = { magicDns: true, nameservers: [], searchDomains: [] };
const DEFAULT_DERP: DerpSettings = { embedded: true, regions: [] };

export function dnsSettingsOf(network: DnsDerpColumns): DnsSettings {
  const stored: StoredDns = network.dns ? JSON.parse(network.dns) : DEFAULT_DNS;
  return { domain: network.dns_domain ?? dnsDomain(network.name), ...stored };
}

export function derpSettingsOf(network: Pick<DnsDerpColumns, 'derp'>): DerpSettings {
  return network.derp ? JSON.parse(network.derp) : DEFAULT_DERP;
}

/**
 * The columns a PATCH writes, after the checks the body's schema cannot make (an address is an
 * IP address; region ids are unique, each node's region is its own, the embedded relay's id is
 * not taken). Throws `invalid_request` naming the offending value; nothing is written then.
 */
export function dnsDerpUpdate(
  network: DnsDerpColumns,
  body: Pick<PatchNetworkRequest, 'dns' | 'derp'>,
): Partial<Pick<DnsDerpColumns, 'dns_domain' | 'dns' | 'derp'>> {
  const update: Partial<Pick<DnsDerpColumns, 'dns_domain' | 'dns' | 'derp'>> = {};
  if (body.dns) {
    const { domain, ...rest } = body.dns;
    for (const address of rest.nameservers ?? []) {
      if (!isIP(address)) throw invalidRequest(`dns.nameservers: "${address}" is not an IP address`);
    }
    if (domain !== undefined) update.dns_domain = domain;
    const { domain: _current, ...current } = dnsSettingsOf(network);
    update.dns = JSON.stringify({ ...current, ...rest });
  }
  if (body.derp) {
    const merged = { ...derpSettingsOf(network), ...body.derp };
    checkRegions(merged);
    update.derp = JSON.stringify(merged);
  }
  return update;
}

function checkRegions({ embedded, regions }: DerpSettings): void {
  const ids = new Set<number>();
  for (const region of regions) {
    if (ids.has(region.RegionID)) throw invalidRequest(`derp.regions: RegionID ${region.RegionID} appears twice`);
    ids.add(region.RegionID);
    if (embedded && region.RegionID === EMBEDDED_DERP_REGION_ID) {
      throw invalidRequest(
        `derp.regions: RegionID ${EMBEDDED_DERP_REGION_ID} is the embedded relay's; give the region another id or set derp.embedded to false`,
      );
    }
    for (const node of region.Nodes) {
      if (node.RegionID !== region.RegionID) {
        throw invalidRequest(
          `derp.regions: node "${node.Name}" has RegionID ${node.RegionID} inside region ${region.RegionID}`,
        );
      }
    }
  }
}

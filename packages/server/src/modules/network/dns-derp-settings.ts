/**
 * A network's DNS and relay settings (PATCH /v1/network `dns` and `derp`), as stored in
 * `networks.dns_domain`, `networks.dns` and `networks.derp` (migration 025) and as the API
 * shows them. Defaults, as Tailscale's: MagicDNS on, no nameservers, search domains, split DNS
 * or extra records; the embedded relay in the DERP map when the server runs one, no other
 * regions. `networks.dns` is JSON, so a field added later (split DNS, extra records) needs no
 * migration: a row written before it reads as the field's default.
 *
 * A PATCH merges: a field left out keeps its value, `domain: null` goes back to the default.
 */
import { isIP } from 'node:net';
import {
  type DerpRegionBody,
  type DerpRegionSettingBody,
  DNS_NAME_PATTERN,
  type DnsRecordBody,
  dnsDomain,
  EMBEDDED_DERP_REGION_ID,
  type NetworkBody,
  type PatchNetworkRequest,
} from '@warren/contract';
import { invalidRequest } from '../../core/errors.js';
import { parsePrefix } from '../../policy/index.js';

/** As GET /v1/network shows them (`splitDns` is tailcfg.DNSConfig.Routes, by domain). */
export type DnsSettings = NetworkBody['dns'];

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

const DEFAULT_DNS: StoredDns = { magicDns: true, nameservers: [], searchDomains: [], splitDns: {}, extraRecords: [] };
const DNS_NAME = new RegExp(DNS_NAME_PATTERN);
const DEFAULT_DERP: DerpSettings = { embedded: true, regions: [] };

export function dnsSettingsOf(network: DnsDerpColumns): DnsSettings {
  const stored: StoredDns = network.dns ? { ...DEFAULT_DNS, ...JSON.parse(network.dns) } : DEFAULT_DNS;
  return { domain: network.dns_domain ?? dnsDomain(network.name), ...stored };
}

export function derpSettingsOf(network: Pick<DnsDerpColumns, 'derp'>): DerpSettings {
  return network.derp ? JSON.parse(network.derp) : DEFAULT_DERP;
}

/**
 * The columns a PATCH writes, after the checks the body's schema cannot make (an address is an
 * IP address, of the family its record's type names, given once in its list; a search domain is
 * given once; a split DNS domain is a DNS name; region ids and node names are unique, each node's
 * region is its own, its host name a DNS name or an address, the embedded relay's id is not
 * taken; no split DNS domain is the MagicDNS domain or under it, on the merged result). Throws
 * `invalid_request` naming the offending value; nothing is written then.
 */
export function dnsDerpUpdate(
  network: DnsDerpColumns,
  body: Pick<PatchNetworkRequest, 'dns' | 'derp'>,
): Partial<Pick<DnsDerpColumns, 'dns_domain' | 'dns' | 'derp'>> {
  const update: Partial<Pick<DnsDerpColumns, 'dns_domain' | 'dns' | 'derp'>> = {};
  if (body.dns) {
    const { domain, ...rest } = body.dns;
    checkAddresses('dns.nameservers', rest.nameservers ?? []);
    checkSearchDomains(rest.searchDomains ?? []);
    checkSplitDns(rest.splitDns ?? {});
    checkExtraRecords(rest.extraRecords ?? []);
    const { domain: currentDomain, ...current } = dnsSettingsOf(network);
    const merged = { ...current, ...rest };
    // Checked on the merged result: a new domain can meet a route already stored, and the reverse.
    const mergedDomain = domain === undefined ? currentDomain : (domain ?? dnsDomain(network.name));
    checkSplitDnsOutsideMagicDns(merged.splitDns, mergedDomain, domain !== undefined && rest.splitDns === undefined);
    if (domain !== undefined) update.dns_domain = domain;
    update.dns = JSON.stringify(merged);
  }
  if (body.derp) {
    const merged = { ...derpSettingsOf(network), ...body.derp };
    checkRegions(merged);
    update.derp = JSON.stringify(merged);
  }
  return update;
}

/**
 * Resolver addresses: IP addresses without an interface zone (`fe80::1%eth0` names an interface
 * of one machine, and these settings are every device's), each once — compared as addresses,
 * so `2606:4700::1111` and `2606:4700:0::1111` are the same resolver given twice.
 */
function checkAddresses(field: string, addresses: readonly string[]): void {
  const seen = new Set<string>();
  for (const address of addresses) {
    const parsed = isIP(address) ? parsePrefix(address) : undefined;
    if (!parsed?.ok) {
      const zone = address.includes('%') ? " (an interface zone names one machine's interface)" : '';
      throw invalidRequest(`${field}: "${address}" is not an IP address${zone}`);
    }
    if (seen.has(parsed.prefix.start)) throw invalidRequest(`${field}: "${address}" appears twice`);
    seen.add(parsed.prefix.start);
  }
}

/** Search domains are tried in order, so one given twice is a mistake, not a preference. */
function checkSearchDomains(domains: readonly string[]): void {
  const seen = new Set<string>();
  for (const domain of domains) {
    if (seen.has(domain)) throw invalidRequest(`dns.searchDomains: "${domain}" appears twice`);
    seen.add(domain);
  }
}

/** Keys are checked here rather than by the schema, so the answer names the domain at fault. */
function checkSplitDns(splitDns: Record<string, string[]>): void {
  for (const [domain, nameservers] of Object.entries(splitDns)) {
    if (!DNS_NAME.test(domain)) {
      throw invalidRequest(`dns.splitDns: "${domain}" is not a DNS name (lower case, no trailing dot)`);
    }
    checkAddresses(`dns.splitDns.${domain}`, nameservers);
  }
}

/**
 * A split DNS domain may be neither the MagicDNS domain nor under it. The Tailscale client routes
 * the MagicDNS domain to its own resolver (an empty route: answered from the netmap, NXDOMAIN for
 * any other name) and then lays the split routes over its routes, so such a route either replaces
 * that local-only route or carves part of the domain out of it: names under the MagicDNS domain
 * that are no peer's would go to the route's resolvers, or a route with no resolvers would be a
 * no-op. Either way the setting does not say what the clients do, so it is refused. Checked
 * whether MagicDNS is on or not: devices are named under the domain either way, and turning
 * MagicDNS on must not bring a conflict back. Extra records under the MagicDNS domain stay
 * allowed: answering extra names there is what they are for (as Headscale's `extra_records`).
 * `domainChanged`: the refusal comes from `dns.domain`, so the answer names that field first.
 */
function checkSplitDnsOutsideMagicDns(
  splitDns: Record<string, string[]>,
  magicDnsDomain: string,
  domainChanged: boolean,
): void {
  for (const domain of Object.keys(splitDns)) {
    const relation = domain === magicDnsDomain ? 'is' : domain.endsWith(`.${magicDnsDomain}`) ? 'is under' : undefined;
    if (!relation) continue;
    const field = domainChanged ? `dns.domain: the split DNS route dns.splitDns.${domain}` : `dns.splitDns.${domain}`;
    throw invalidRequest(
      `${field} ${relation} the MagicDNS domain "${magicDnsDomain}", whose names Tailscale clients answer themselves; route another domain, or answer names under it with dns.extraRecords`,
    );
  }
}

function checkExtraRecords(records: readonly DnsRecordBody[]): void {
  const seen = new Set<string>();
  records.forEach(({ name, type, value }, index) => {
    const family = type === 'A' ? 4 : 6;
    if (isIP(value) !== family) {
      throw invalidRequest(`dns.extraRecords.${index}.value: "${value}" is not an IPv${family} address`);
    }
    const key = `${name} ${type} ${value}`;
    if (seen.has(key)) throw invalidRequest(`dns.extraRecords.${index}: ${type} ${name} → ${value} appears twice`);
    seen.add(key);
  });
}

function checkRegions({ embedded, regions }: DerpSettings): void {
  const ids = new Set<number>();
  const names = new Set<string>();
  for (const region of regions) {
    if (ids.has(region.RegionID)) throw invalidRequest(`derp.regions: RegionID ${region.RegionID} appears twice`);
    ids.add(region.RegionID);
    if (embedded && region.RegionID === EMBEDDED_DERP_REGION_ID) {
      throw invalidRequest(
        `derp.regions: RegionID ${EMBEDDED_DERP_REGION_ID} is the embedded relay's; give the region another id or set derp.embedded to false`,
      );
    }
    for (const node of region.Nodes as DerpRegionSettingBody['Nodes']) {
      const field = `derp.regions: node "${node.Name}"`;
      if (node.RegionID !== region.RegionID) {
        throw invalidRequest(`${field} has RegionID ${node.RegionID} inside region ${region.RegionID}`);
      }
      // tailcfg.DERPNode: "a unique node name (across all regions)".
      if (names.has(node.Name)) throw invalidRequest(`${field} appears twice (node names are unique across regions)`);
      names.add(node.Name);
      checkNodeAddresses(field, node);
    }
  }
}

/**
 * A node's host name is dialed by every client: a DNS name (any case) or an IP address. IPv4 and
 * IPv6 force the address of their family, or are "none" (Tailscale's spelling for "not over
 * this family"); an address of the other family would be silently ignored by the client.
 */
function checkNodeAddresses(field: string, node: DerpRegionSettingBody['Nodes'][number]): void {
  if (!isIP(node.HostName) && !DNS_NAME.test(node.HostName.toLowerCase())) {
    throw invalidRequest(`${field}: HostName "${node.HostName}" is neither a DNS name nor an IP address`);
  }
  for (const [name, family] of [
    ['IPv4', 4],
    ['IPv6', 6],
  ] as const) {
    const value = node[name];
    if (value !== undefined && value !== 'none' && isIP(value) !== family) {
      throw invalidRequest(`${field}: ${name} "${value}" is not an IPv${family} address (or "none")`);
    }
  }
  if (node.STUNTestIP !== undefined && !isIP(node.STUNTestIP)) {
    throw invalidRequest(`${field}: STUNTestIP "${node.STUNTestIP}" is not an IP address`);
  }
}

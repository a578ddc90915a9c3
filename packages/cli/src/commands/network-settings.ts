/**
 * The flags of `warren network set` turned into one `PATCH /v1/network` body holding only what
 * was given. Only the flags' syntax is checked here (`DOMAIN=IP`, `NAME=ADDRESS`, a JSON array):
 * whether an address, a domain or a region is acceptable is the server's rule, and its problem
 * is what people see.
 */
import type { DnsRecordBody } from '@warren/client';
import { DURATION_RE, type PatchNetworkRequest } from '@warren/contract';
import { readInput, UsageError } from './output.js';

export interface NetworkSetFlags {
  deviceApproval?: boolean;
  nodeKeyExpiry?: string;
  flowLogs?: boolean;
  dnsDomain?: string;
  dnsDomainDefault?: boolean;
  magicDns?: boolean;
  nameserver?: string[];
  /** false after `--no-nameservers` (commander defaults a lone `--no-` flag to true). */
  nameservers?: boolean;
  searchDomain?: string[];
  searchDomains?: boolean;
  /** The routes given, or false after `--no-split-dns`. */
  splitDns?: string[] | false;
  extraRecord?: string[];
  extraRecords?: boolean;
  derpEmbedded?: boolean;
  derpRegions?: string;
  json?: boolean;
}

/**
 * Flags that set a value and the flag that clears or negates it: giving both is a mistake, not
 * a race that the last one silently wins.
 */
export const OPPOSITES: readonly (readonly [string, string])[] = [
  ['device-approval', 'no-device-approval'],
  ['flow-logs', 'no-flow-logs'],
  ['magic-dns', 'no-magic-dns'],
  ['derp-embedded', 'no-derp-embedded'],
  ['dns-domain', 'dns-domain-default'],
  ['nameserver', 'no-nameservers'],
  ['search-domain', 'no-search-domains'],
  ['split-dns', 'no-split-dns'],
  ['extra-record', 'no-extra-records'],
];

/** Refuses `--x` together with its opposite, naming both; `given` holds the flags seen, without `--`. */
export function refuseOpposites(given: ReadonlySet<string>): void {
  for (const [set, unset] of OPPOSITES) {
    if (given.has(set) && given.has(unset)) throw new UsageError(`pass --${set} or --${unset}, not both`);
  }
}

/** `--split-dns` may follow `--no-split-dns`, whose false is then no list to add to. */
export function collectRoute(value: string, previous: string[] | false | undefined): string[] {
  return [...(previous || []), value];
}

/** `corp.example=10.0.0.53,10.0.0.54` → a split DNS route; `corp.example=` routes to no resolver. */
function splitDnsRoutes(routes: readonly string[]): Record<string, string[]> {
  const map: Record<string, string[]> = {};
  for (const route of routes) {
    const at = route.indexOf('=');
    const domain = route.slice(0, at).trim();
    if (at < 0 || domain === '') {
      throw new UsageError(`--split-dns must be DOMAIN=IP[,IP…], or DOMAIN= for no resolver (got "${route}")`);
    }
    if (Object.hasOwn(map, domain)) throw new UsageError(`--split-dns: ${domain} is given twice`);
    const rest = route.slice(at + 1).trim();
    const addresses = rest === '' ? [] : rest.split(',').map((a) => a.trim());
    if (addresses.includes('')) throw new UsageError(`--split-dns: an empty address in "${route}"`);
    map[domain] = addresses;
  }
  return map;
}

/** `db.corp.example=10.0.0.5` → an A record; an address with a colon (IPv6) → AAAA. */
function extraRecords(records: readonly string[]): DnsRecordBody[] {
  return records.map((record) => {
    const at = record.indexOf('=');
    const name = record.slice(0, at).trim();
    const value = record.slice(at + 1).trim();
    if (at < 0 || name === '' || value === '') {
      throw new UsageError(`--extra-record must be NAME=ADDRESS, e.g. db.corp.example=10.0.0.5 (got "${record}")`);
    }
    return { name, type: value.includes(':') ? 'AAAA' : 'A', value };
  });
}

/** The regions array of a file, or of stdin for `-`. */
async function readRegions(file: string): Promise<unknown[]> {
  const text = await readInput(file);
  let regions: unknown;
  try {
    regions = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--derp-regions: ${file} is not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(regions)) {
    throw new UsageError(`--derp-regions: ${file} must hold a JSON array of DERP regions ([] for none)`);
  }
  return regions;
}

/** The PATCH body: only the settings a flag was given for; no flag at all is a usage error. */
export async function networkPatch(flags: NetworkSetFlags): Promise<PatchNetworkRequest> {
  if (flags.nodeKeyExpiry !== undefined && flags.nodeKeyExpiry !== '0' && !DURATION_RE.test(flags.nodeKeyExpiry)) {
    throw new UsageError(
      `--node-key-expiry must be a duration such as 90d or 24h, or 0 for never (got "${flags.nodeKeyExpiry}")`,
    );
  }
  const dns: NonNullable<PatchNetworkRequest['dns']> = {};
  if (flags.dnsDomain !== undefined) dns.domain = flags.dnsDomain;
  if (flags.dnsDomainDefault) dns.domain = null;
  if (flags.magicDns !== undefined) dns.magicDns = flags.magicDns;
  if (flags.nameserver) dns.nameservers = flags.nameserver;
  if (flags.nameservers === false) dns.nameservers = [];
  if (flags.searchDomain) dns.searchDomains = flags.searchDomain;
  if (flags.searchDomains === false) dns.searchDomains = [];
  if (flags.splitDns) dns.splitDns = splitDnsRoutes(flags.splitDns);
  if (flags.splitDns === false) dns.splitDns = {};
  if (flags.extraRecord) dns.extraRecords = extraRecords(flags.extraRecord);
  if (flags.extraRecords === false) dns.extraRecords = [];
  const derp: NonNullable<PatchNetworkRequest['derp']> = {};
  if (flags.derpEmbedded !== undefined) derp.embedded = flags.derpEmbedded;
  // The server checks each region's fields and names the one it refuses.
  if (flags.derpRegions !== undefined) {
    derp.regions = (await readRegions(flags.derpRegions)) as NonNullable<PatchNetworkRequest['derp']>['regions'];
  }
  const patch: PatchNetworkRequest = {
    ...(flags.deviceApproval !== undefined && { deviceApproval: flags.deviceApproval }),
    ...(flags.nodeKeyExpiry !== undefined && { nodeKeyExpiry: flags.nodeKeyExpiry }),
    ...(flags.flowLogs !== undefined && { flowLogs: flags.flowLogs }),
    ...(Object.keys(dns).length > 0 && { dns }),
    ...(Object.keys(derp).length > 0 && { derp }),
  };
  if (Object.keys(patch).length === 0) {
    throw new UsageError('nothing to set: pass at least one setting (see: warren network set --help)');
  }
  return patch;
}

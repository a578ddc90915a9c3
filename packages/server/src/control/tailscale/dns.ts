/**
 * MagicDNS: every device is `<device name>.<domain>`, the domain being the network's name made
 * DNS-safe under `warren.internal` (docs/TAILSCALE.md). The client answers those names itself
 * (Proxied) from its peers' names in the map.
 */

/** `<network name>.warren.internal`, lower case, each character outside [a-z0-9-] a dash. */
export function dnsDomain(networkName: string): string {
  const label =
    networkName
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63) || 'network';
  return `${label}.warren.internal`;
}

/** tailcfg.DNSConfig: MagicDNS on, the domain searched. */
export function dnsConfig(domain: string): Record<string, unknown> {
  return { Resolvers: [], Domains: [domain], Proxied: true };
}

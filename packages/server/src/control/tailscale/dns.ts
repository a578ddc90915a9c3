/**
 * MagicDNS: every device is `<device name>.<domain>`, the domain being the network's name made
 * DNS-safe under `warren.internal` (docs/TAILSCALE.md). The client answers those names itself
 * (Proxied) from its peers' names in the map.
 */
export { dnsDomain } from '../../modules/network/dns-domain.js';

/** tailcfg.DNSConfig: MagicDNS on, the domain searched. */
export function dnsConfig(domain: string): Record<string, unknown> {
  return { Resolvers: [], Domains: [domain], Proxied: true };
}

/**
 * tailcfg.DNSConfig from the network's DNS settings (`dns` of PATCH /v1/network). With MagicDNS
 * on, every device is `<device name>.<domain>` and the client answers those names itself
 * (Proxied) from its peers' names in the map; the domain is searched first, then the search
 * domains. Nameservers become the client's resolvers for every other name.
 */
import type { DnsSettings } from '../../modules/network/dns-derp-settings.js';

export function dnsConfig(dns: DnsSettings): Record<string, unknown> {
  const domains = dns.magicDns ? [dns.domain, ...dns.searchDomains] : dns.searchDomains;
  return {
    Resolvers: dns.nameservers.map((address) => ({ Addr: address })),
    Domains: [...new Set(domains)],
    Proxied: dns.magicDns,
  };
}

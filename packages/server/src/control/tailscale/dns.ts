/**
 * tailcfg.DNSConfig from the network's DNS settings (`dns` of PATCH /v1/network). With MagicDNS
 * on, every device is `<device name>.<domain>` and the client answers those names itself
 * (Proxied) from its peers' names in the map; the domain is searched first, then the search
 * domains. Nameservers become the client's resolvers for every other name.
 *
 * Split DNS domains are the keys of `Routes`, not search domains (as Tailscale's and Headscale's
 * control servers send them): the client sends names under a domain to its resolvers, and with
 * an empty list answers them itself (extra records, NXDOMAIN for the rest) without forwarding
 * them, tailcfg.DNSConfig's own reading of an empty route. Extra records go to `ExtraRecords`,
 * which the client's resolver (100.100.100.100) answers. Both are left out when empty, as the
 * client reads a missing field as empty, so maps of networks that use neither stay as they were.
 */
import type { DnsSettings } from '../../modules/network/dns-derp-settings.js';

export function dnsConfig(dns: DnsSettings): Record<string, unknown> {
  const domains = dns.magicDns ? [dns.domain, ...dns.searchDomains] : dns.searchDomains;
  const routes = Object.entries(dns.splitDns);
  return {
    Resolvers: resolvers(dns.nameservers),
    Domains: [...new Set(domains)],
    Proxied: dns.magicDns,
    ...(routes.length > 0 && {
      Routes: Object.fromEntries(routes.map(([domain, nameservers]) => [domain, resolvers(nameservers)])),
    }),
    ...(dns.extraRecords.length > 0 && {
      ExtraRecords: dns.extraRecords.map(({ name, type, value }) => ({ Name: name, Type: type, Value: value })),
    }),
  };
}

const resolvers = (addresses: readonly string[]) => addresses.map((address) => ({ Addr: address }));

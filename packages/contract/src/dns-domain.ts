/**
 * A network's DNS domain (MagicDNS): `<network name>.warren.internal`, the name lower case with
 * each run of characters outside [a-z0-9-] a dash, as a DNS label. Devices are
 * `<device name>.<domain>` (`dnsName` in /v1, names in Tailscale clients' maps). Shared by the
 * server, which derives it, and the console, which says when a network's domain is this default.
 */
export function dnsDomain(networkName: string): string {
  const label =
    networkName
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 63)
      // Cut at 63, the label may end in a dash again, which no DNS label may.
      .replace(/-+$/, '') || 'network';
  return `${label}.warren.internal`;
}

/**
 * Which addresses a webhook may not reach: everything that is not globally reachable, from
 * IANA's IPv4 and IPv6 special-purpose address registries (loopback, private, link-local with
 * the cloud metadata address 169.254.169.254, CGNAT 100.64.0.0/10 — the mesh's own range —,
 * documentation, benchmarking, discard, the deprecated site-local fec0::/10, ORCHID, SRv6 SIDs,
 * multicast and reserved ranges).
 *
 * An IPv6 address that carries an IPv4 address is judged by that IPv4 address, by the same
 * rules: IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), IPv4-compatible
 * (::/96), NAT64 (64:ff9b::/96), 6to4 (2002::/16, the IPv4 address in bits 16-47) and Teredo
 * (2001::/32: the server's IPv4 in bits 32-63 and the client's, inverted, in the last 32; both
 * must be allowed). Without this `https://[::127.0.0.1]/` and `https://[2002:7f00:1::]/` reached
 * loopback. The local-use NAT64 prefix 64:ff9b:1::/48 is not globally reachable and is refused
 * whole. Addresses are parsed by ipaddr.js (every textual form, zone ids included) and matched
 * with node:net's BlockList.
 *
 * Beyond the registry's list, an IPv6 address that carries no IPv4 address must be global
 * unicast (2000::/3, the only range IANA allocates for it): the rest is reserved by the IETF
 * and reaches no host on the internet. Within it, the IETF protocol assignments (2001::/23)
 * are refused but for the blocks the registry marks globally reachable (AMT 2001:3::/32,
 * AS112 2001:4:112::/48) and Teredo, judged by what it carries; so ORCHID (2001:10::/28),
 * ORCHIDv2 (2001:20::/28), drone identifiers (2001:30::/28), benchmarking and the anycast
 * service addresses are refused, as are blocks assigned there later.
 */
import { BlockList } from 'node:net';
import ipaddr from 'ipaddr.js';

const blocked = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, bits, 'ipv4');
}
// IPv6 ranges that are refused whatever follows; the IPv4-carrying ranges are judged by the
// address they carry (below) and are not listed here.
for (const [net, bits] of [
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['100:0:0:1::', 64],
  ['2001:1::1', 128],
  ['2001:1::2', 128],
  ['2001:1::3', 128],
  ['2001:2::', 48],
  ['2001:10::', 28],
  ['2001:20::', 28],
  ['2001:30::', 28],
  ['2001:db8::', 32],
  ['3fff::', 20],
  ['5f00::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, bits, 'ipv6');
}

const globalUnicast = new BlockList();
globalUnicast.addSubnet('2000::', 3, 'ipv6');
const protocolAssignments = new BlockList();
protocolAssignments.addSubnet('2001::', 23, 'ipv6');
const reachableAssignments = new BlockList();
for (const [net, bits] of [
  ['2001:3::', 32],
  ['2001:4:112::', 48],
] as const) {
  reachableAssignments.addSubnet(net, bits, 'ipv6');
}

const ipv4 = (high: number, low: number): string => `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;

/** The IPv4 addresses an IPv6 address carries, by the forms above; empty for none. */
export function embeddedIpv4(address: ipaddr.IPv6): string[] {
  const p = address.parts;
  const zero = (from: number, to: number) => p.slice(from, to).every((x) => x === 0);
  if (zero(0, 5) && p[5] === 0xffff) return [ipv4(p[6], p[7])]; // ::ffff:a.b.c.d
  if (zero(0, 4) && p[4] === 0xffff && p[5] === 0) return [ipv4(p[6], p[7])]; // ::ffff:0:a.b.c.d
  if (zero(0, 6)) return [ipv4(p[6], p[7])]; // ::a.b.c.d, :: and ::1 included
  if (p[0] === 0x64 && p[1] === 0xff9b && zero(2, 6)) return [ipv4(p[6], p[7])]; // NAT64
  if (p[0] === 0x2002) return [ipv4(p[1], p[2])]; // 6to4
  if (p[0] === 0x2001 && p[1] === 0) return [ipv4(p[2], p[3]), ipv4(p[6] ^ 0xffff, p[7] ^ 0xffff)]; // Teredo
  return [];
}

/** True for an address a webhook may not reach unless private targets are allowed. */
export function isForbiddenAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return true; // not an address: nothing to allow
  }
  if (parsed.kind() === 'ipv4') return blocked.check(parsed.toString(), 'ipv4');
  const v6 = parsed as ipaddr.IPv6;
  const text = v6.toNormalizedString();
  const carried = embeddedIpv4(v6);
  if (carried.length > 0) return carried.some((v4) => blocked.check(v4, 'ipv4')) || blocked.check(text, 'ipv6');
  if (!globalUnicast.check(text, 'ipv6')) return true;
  if (protocolAssignments.check(text, 'ipv6') && !reachableAssignments.check(text, 'ipv6')) return true;
  return blocked.check(text, 'ipv6');
}

/**
 * Device addresses and names.
 *
 * Addresses come from a per-network counter (`networks.next_addr_index`, monotonic, so an
 * address is never handed out twice while its device exists — nor soon after). Counter value
 * n maps to an offset inside 100.64.0.0/10 that skips every .0 and .255, and the IPv6 address
 * is fd7a:115c:a1e0:: plus the same offset, so both addresses of a device read alike.
 */

const V4_BASE = (100 << 24) | (64 << 16); // 100.64.0.0
const V6_PREFIX = 'fd7a:115c:a1e0::';
const HOSTS_PER_BLOCK = 254; // .1 – .254 of every /24
/** The last usable counter value: the whole /10 (2^22 addresses) minus .0 and .255 of each /24. */
export const MAX_ADDR_INDEX = (2 ** 22 / 256) * HOSTS_PER_BLOCK;

function addrOffset(index: number): number {
  const n = index - 1;
  return Math.floor(n / HOSTS_PER_BLOCK) * 256 + (n % HOSTS_PER_BLOCK) + 1;
}

export function ipv4Of(index: number): string {
  const value = (V4_BASE + addrOffset(index)) >>> 0;
  return [value >>> 24, (value >>> 16) & 255, (value >>> 8) & 255, value & 255].join('.');
}

export function ipv6Of(index: number): string {
  const offset = addrOffset(index);
  const high = Math.floor(offset / 65536);
  const low = offset % 65536;
  return high === 0 ? `${V6_PREFIX}${low.toString(16)}` : `${V6_PREFIX}${high.toString(16)}:${low.toString(16)}`;
}

export function addressesOf(index: number): string[] {
  return [ipv4Of(index), ipv6Of(index)];
}

/**
 * A hostname as a lowercase DNS label: its first label, letters/digits/dashes only, at most
 * 63 characters; `device` when nothing usable is left.
 */
export function nameBase(hostname: string): string {
  const first = hostname.trim().toLowerCase().split('.')[0] ?? '';
  const label = first
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/-{2,}/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/, '');
  return label || 'device';
}

/** `web` for seq 0, else `web-<seq>` (the base shortened so the name stays a 63-char label). */
export function nameOf(base: string, seq: number): string {
  if (seq === 0) return base;
  const suffix = `-${seq}`;
  return `${base.slice(0, 63 - suffix.length).replace(/-+$/, '') || 'device'}${suffix}`;
}

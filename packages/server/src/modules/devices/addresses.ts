/**
 * Device addresses and names.
 *
 * Addresses come from a per-network counter (`networks.next_addr_index`, monotonic, so an
 * address is never handed out twice while its device exists — nor soon after). Counter value
 * n maps to an offset inside 100.64.0.0/10 that skips every .0 and .255, and the IPv6 address
 * is fd7a:115c:a1e0:: plus the same offset, so both addresses of a device read alike.
 */

import { isIPv4, isIPv6 } from 'node:net';

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

/**
 * The counter value of a device address (IPv4 in 100.64.0.0/10 or IPv6 in fd7a:115c:a1e0::/48,
 * the inverse of ipv4Of and ipv6Of), or undefined for any other text: a search by address is
 * then one probe of the (network_id, addr_index) index.
 */
export function addrIndexOf(address: string): number | undefined {
  const offset = isIPv4(address) ? v4Offset(address) : isIPv6(address) ? v6Offset(address) : undefined;
  if (offset === undefined || offset <= 0) return undefined;
  const host = offset % 256;
  if (host === 0 || host === 255) return undefined;
  const index = Math.floor(offset / 256) * HOSTS_PER_BLOCK + host;
  return index <= MAX_ADDR_INDEX ? index : undefined;
}

function v4Offset(address: string): number | undefined {
  const value = address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
  const offset = value - V4_BASE;
  return offset >= 0 && offset < 2 ** 22 ? offset : undefined;
}

function v6Offset(address: string): number | undefined {
  const groups = expandIPv6(address.toLowerCase());
  // fd7a:115c:a1e0:0:0:0:high:low
  if (groups.slice(0, 6).join(':') !== 'fd7a:115c:a1e0:0:0:0') return undefined;
  return Number.parseInt(groups[6]!, 16) * 65536 + Number.parseInt(groups[7]!, 16);
}

/** The eight groups of an IPv6 address, each without leading zeros. */
function expandIPv6(address: string): string[] {
  const [head = '', tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const middle = tail === undefined ? [] : Array(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((g) => Number.parseInt(g, 16).toString(16));
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

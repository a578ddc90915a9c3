/**
 * Endpoint addresses of reported connections: `ip:port` for IPv4 and `[ip]:port` for IPv6.
 * Parsing yields the canonical text that is stored (IPv6 lowercased and compressed as in
 * RFC 5952) and, for an address inside the network's ranges, the address index of the
 * device it would belong to — the inverse of the allocation in modules/devices/addresses.ts:
 * index n sits at offset n of 100.64.0.0/10 and fd7a:115c:a1e0::/48, counting only .1–.254
 * of every /24 (so offsets ending in .0 or .255 belong to no device).
 * An IPv4-mapped IPv6 address (`[::ffff:100.64.0.7]:443`) is the IPv4 address it maps: it is
 * stored in IPv4 form and resolves to the same device, so no check can be side-stepped by
 * spelling an address the other way.
 */
import { isIPv6 } from 'node:net';

export interface ParsedEndpoint {
  /** Canonical `ip:port` / `[ip]:port`. */
  text: string;
  port: number;
  /** Address index of a Warren address, or undefined for any other address. */
  addrIndex: number | undefined;
}

const V4 = /^([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3})\.([0-9]{1,3}):([0-9]{1,5})$/;
const V6 = /^\[([0-9A-Fa-f:.]{2,45})\]:([0-9]{1,5})$/;
const PORT = /^(?:0|[1-9][0-9]{0,4})$/;

/** Parses an endpoint; a string says what is wrong with it. */
export function parseEndpoint(value: string): ParsedEndpoint | string {
  // Devices send thousands of these per batch: IPv4 is checked without allocating.
  const v4 = V4.exec(value);
  if (v4) {
    const port = parsePort(v4[5] as string);
    if (port === undefined) return 'has a port outside 0–65535';
    const a = octet(v4[1] as string);
    const b = octet(v4[2] as string);
    const c = octet(v4[3] as string);
    const d = octet(v4[4] as string);
    if (a < 0 || b < 0 || c < 0 || d < 0) return 'is not a valid IPv4 address';
    return { text: value, port, addrIndex: v4Index(a, b, c, d) };
  }
  const v6 = V6.exec(value);
  if (!v6) return 'is not an address with a port (use 100.64.0.7:443 or [fd7a:115c:a1e0::7]:443)';
  const port = parsePort(v6[2] as string);
  if (port === undefined) return 'has a port outside 0–65535';
  const hextets = parseIPv6(v6[1] as string);
  if (!hextets) return 'is not a valid IPv6 address';
  if (isMapped(hextets)) {
    const [x = 0, y = 0] = hextets.slice(6);
    const [a, b, c, d] = [x >> 8, x & 255, y >> 8, y & 255];
    return { text: `${a}.${b}.${c}.${d}:${port}`, port, addrIndex: v4Index(a, b, c, d) };
  }
  return { text: `[${formatIPv6(hextets)}]:${port}`, port, addrIndex: v6Index(hextets) };
}

/** The host part of a canonical endpoint text: `100.64.0.7:443` → `100.64.0.7`, `[fd7a::7]:22` → `fd7a::7`. */
export function hostOf(text: string): string {
  return text.startsWith('[') ? text.slice(1, text.indexOf(']')) : text.slice(0, text.lastIndexOf(':'));
}

function v4Index(a: number, b: number, c: number, d: number): number | undefined {
  return a === 100 && b >= 64 && b <= 127 ? indexOfOffset((b - 64) * 65536 + c * 256 + d) : undefined;
}

/** ::ffff:0:0/96 */
const isMapped = (h: number[]) => h.slice(0, 5).every((g) => g === 0) && h[5] === 0xffff;

/** 0–65535 without leading zeros, or undefined. */
function parsePort(text: string): number | undefined {
  if (!PORT.test(text)) return undefined;
  const port = Number(text);
  return port <= 65535 ? port : undefined;
}

/** A dotted-quad part (0–255, no leading zeros), or -1. */
function octet(text: string): number {
  if (text.length > 1 && text.charCodeAt(0) === 48) return -1;
  const value = Number(text);
  return value <= 255 ? value : -1;
}

const HOSTS_PER_BLOCK = 254;

/** Offset inside the ranges → address index (see the file comment), or undefined. */
export function indexOfOffset(offset: number): number | undefined {
  const host = offset % 256;
  if (host === 0 || host === 255) return undefined;
  return Math.floor(offset / 256) * HOSTS_PER_BLOCK + host;
}

const WARREN_V6 = [0xfd7a, 0x115c, 0xa1e0];

/** fd7a:115c:a1e0::/48 → index (offsets of devices fit in the low 32 bits); others → undefined. */
function v6Index(h: number[]): number | undefined {
  if (h[0] !== WARREN_V6[0] || h[1] !== WARREN_V6[1] || h[2] !== WARREN_V6[2]) return undefined;
  if (h[3] !== 0 || h[4] !== 0 || h[5] !== 0) return undefined;
  return indexOfOffset((h[6] as number) * 65536 + (h[7] as number));
}

/** Eight 16-bit groups, or undefined (zone ids are not addresses of a peer). */
export function parseIPv6(ip: string): number[] | undefined {
  if (ip.includes('%') || !isIPv6(ip)) return undefined;
  let text = ip.toLowerCase();
  const lastColon = text.lastIndexOf(':');
  if (text.includes('.', lastColon)) {
    // An embedded IPv4 tail (::ffff:1.2.3.4) is the last two groups.
    const [a, b, c, d] = text
      .slice(lastColon + 1)
      .split('.')
      .map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${(a * 256 + b).toString(16)}:${(c * 256 + d).toString(16)}`;
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((g) => Number.parseInt(g, 16)));
  const gap = text.indexOf('::');
  const head = gap < 0 ? groups(text) : groups(text.slice(0, gap));
  const rest = gap < 0 ? [] : groups(text.slice(gap + 2));
  const missing = 8 - head.length - rest.length;
  if (missing < 0 || (gap < 0 && missing !== 0)) return undefined;
  const out = [...head, ...new Array<number>(missing).fill(0), ...rest];
  return out.length === 8 && out.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? out : undefined;
}

/** RFC 5952: lowercase, no leading zeros, the longest run (≥ 2) of zero groups as `::`, mapped IPv4 dotted. */
export function formatIPv6(h: number[]): string {
  if (isMapped(h)) {
    const [x = 0, y = 0] = h.slice(6);
    return `::ffff:${x >> 8}.${x & 255}.${y >> 8}.${y & 255}`;
  }
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (h[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && h[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (groups: number[]) => groups.map((g) => g.toString(16)).join(':');
  if (bestStart < 0) return hex(h);
  return `${hex(h.slice(0, bestStart))}::${hex(h.slice(bestStart + bestLength))}`;
}

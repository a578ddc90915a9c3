// Over-permissive policies, defined by meaning rather than spelling: `*`, `autogroup:member`
// with `autogroup:tagged`, and address prefixes that together hold every device's addresses
// are all "every device"; `*:*`, `*:1-65535` and ports split across entries are all "every
// port". A rule (acl or grant) is over-permissive when its sources cover every device and its
// destinations cover every device on every port for every protocol; autoApprovers are when
// every user (every device's owner) could get prefixes approved that together make all of IPv4
// or all of IPv6 (the exit node's default routes included).

import { type KeyRange, type Prefix, parsePrefix } from './cidr.js';
import type { PortRanges } from './ports.js';
import type { CompiledDst, Selector } from './types.js';

function prefix(text: string): Prefix {
  const r = parsePrefix(text);
  if (!r.ok) throw new Error(r.msg);
  return r.prefix;
}

/**
 * The address pools every device's addresses come from (modules/devices/addresses.ts): a set
 * of prefixes holding either pool holds every device there is or will be.
 */
const DEVICE_POOLS: readonly Prefix[] = [prefix('100.64.0.0/10'), prefix('fd7a:115c:a1e0::/48')];
export const ALL_V4 = prefix('0.0.0.0/0');
export const ALL_V6 = prefix('::/0');

/** The key right after `key` in its family, or null past the last address. */
function nextKey(key: string): string | null {
  const digits = key.split('');
  for (let i = digits.length - 1; i > 0; i--) {
    if (digits[i] !== 'f') {
      digits[i] = (Number.parseInt(digits[i], 16) + 1).toString(16);
      return digits.join('');
    }
    digits[i] = '0';
  }
  return null;
}

/** Whether `ranges` together hold every address of `target` (same family keys compare as text). */
export function unionCovers(ranges: readonly KeyRange[], target: KeyRange): boolean {
  const family = target.start[0];
  const sorted = ranges.filter((r) => r.start[0] === family).sort((a, b) => (a.start < b.start ? -1 : 1));
  let next: string | null = target.start;
  for (const r of sorted) {
    if (r.start > next) return false;
    if (r.end >= next) {
      if (r.end >= target.end) return true;
      next = nextKey(r.end);
      if (next === null) return true;
    }
  }
  return false;
}

/** Whether the selectors together hold every device: user-owned, tagged, or by address. */
export function coversEveryDevice(sels: readonly Selector[]): boolean {
  if (sels.some((s) => s.kind === 'all')) return true;
  if (sels.some((s) => s.kind === 'member') && sels.some((s) => s.kind === 'tagged')) return true;
  const prefixes = sels.flatMap((s) => (s.kind === 'prefix' ? [s.prefix] : []));
  return prefixes.length > 0 && DEVICE_POOLS.some((pool) => unionCovers(prefixes, pool));
}

/** Real ports: 0 is no port traffic uses, so `*` and `1-65535` mean the same. */
function clamp(ports: PortRanges): Array<readonly [number, number]> {
  return ports.map(([lo, hi]) => [Math.max(lo, 1), hi] as const);
}

/**
 * The index of the destination to report a rule at when it lets every device reach every
 * device on every port and protocol, else -1. Only entries open to every protocol count; the
 * ports are cut into segments at every entry's bounds, and each segment needs destinations
 * that together hold every device.
 */
export function overPermissiveRule(src: readonly Selector[], dst: readonly CompiledDst[]): number {
  if (!coversEveryDevice(src)) return -1;
  const open = dst.flatMap((d, i) => (d.protos === null ? [{ i, sel: d.sel, ports: clamp(d.ports) }] : []));
  if (open.length === 0) return -1;
  const bounds = new Set([1, 65536]);
  for (const d of open) for (const [lo, hi] of d.ports) bounds.add(lo).add(hi + 1);
  const cuts = [...bounds].filter((b) => b >= 1 && b <= 65536).sort((a, b) => a - b);
  for (let k = 0; k + 1 < cuts.length; k++) {
    const port = cuts[k];
    const holding = open.filter((d) => d.ports.some(([lo, hi]) => port >= lo && port <= hi));
    if (!coversEveryDevice(holding.map((d) => d.sel))) return -1;
  }
  return open[0].i;
}

/** An approver that holds every user's devices: `*` or `autogroup:member`. */
export function approvesEveryUser(sel: Selector): boolean {
  return sel.kind === 'all' || sel.kind === 'member';
}

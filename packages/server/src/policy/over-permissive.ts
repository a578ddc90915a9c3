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
 * that together hold every device. One sweep over the bounds in port order keeps the
 * destinations holding the current segment up to date, so a rule with thousands of entries
 * costs the sort of its bounds, not segments × entries.
 */
export function overPermissiveRule(src: readonly Selector[], dst: readonly CompiledDst[]): number {
  if (!coversEveryDevice(src)) return -1;
  const open = dst.flatMap((d, i) => (d.protos === null ? [{ i, sel: d.sel, ports: clamp(d.ports) }] : []));
  if (open.length === 0) return -1;
  // +1 at a range's first port, -1 past its last; an entry holds a segment while its count is above 0.
  const bounds: Array<{ at: number; entry: number; step: 1 | -1 }> = [];
  open.forEach((d, entry) => {
    for (const [lo, hi] of d.ports) {
      if (lo > hi) continue;
      bounds.push({ at: lo, entry, step: 1 }, { at: hi + 1, entry, step: -1 });
    }
  });
  bounds.sort((a, b) => a.at - b.at);
  const holding = new HoldingSet();
  const counts = new Array<number>(open.length).fill(0);
  let k = 0;
  for (let port = 1; port <= 65535; ) {
    for (; k < bounds.length && bounds[k].at <= port; k++) {
      const { entry, step } = bounds[k];
      const before = counts[entry];
      counts[entry] += step;
      if (before === 0 && step === 1) holding.add(open[entry].sel, 1);
      else if (before === 1 && step === -1) holding.add(open[entry].sel, -1);
    }
    if (!holding.coversEveryDevice()) return -1;
    port = k < bounds.length ? bounds[k].at : 65536;
  }
  return open[0].i;
}

/** A multiset of selectors that answers coversEveryDevice as selectors come and go. */
class HoldingSet {
  private all = 0;
  private member = 0;
  private tagged = 0;
  private readonly pools = DEVICE_POOLS.map((pool) => new PoolCoverage(pool));

  add(sel: Selector, step: 1 | -1): void {
    if (sel.kind === 'all') this.all += step;
    else if (sel.kind === 'member') this.member += step;
    else if (sel.kind === 'tagged') this.tagged += step;
    else if (sel.kind === 'prefix') for (const pool of this.pools) pool.add(sel.prefix, step);
  }

  coversEveryDevice(): boolean {
    return this.all > 0 || (this.member > 0 && this.tagged > 0) || this.pools.some((p) => p.covered());
  }
}

interface TrieNode {
  count: number;
  full: boolean;
  children: [TrieNode | undefined, TrieNode | undefined];
}

/**
 * Whether the prefixes added (and not removed) together hold every address of a pool: a binary
 * trie below the pool where a node is full when a prefix ends there or both halves are full.
 * Adding or removing a prefix touches one path, at most 128 nodes.
 */
class PoolCoverage {
  private whole = 0;
  private readonly root: TrieNode = { count: 0, full: false, children: [undefined, undefined] };

  constructor(private readonly pool: Prefix) {}

  add(prefix: Prefix, step: 1 | -1): void {
    if (prefix.family !== this.pool.family) return;
    if (prefix.bits <= this.pool.bits) {
      if (prefix.start <= this.pool.start && prefix.end >= this.pool.end) this.whole += step;
      return;
    }
    if (prefix.start < this.pool.start || prefix.end > this.pool.end) return;
    const path: TrieNode[] = [this.root];
    let node = this.root;
    for (let bit = this.pool.bits; bit < prefix.bits; bit++) {
      const side = keyBit(prefix.start, bit);
      node.children[side] ??= { count: 0, full: false, children: [undefined, undefined] };
      node = node.children[side];
      path.push(node);
    }
    node.count += step;
    for (let i = path.length - 1; i >= 0; i--) {
      const n = path[i];
      n.full = n.count > 0 || (n.children[0]?.full === true && n.children[1]?.full === true);
    }
  }

  covered(): boolean {
    return this.whole > 0 || this.root.full;
  }
}

/** Bit `bit` (0 = most significant) of an address key ('4' or '6', then hex digits). */
function keyBit(key: string, bit: number): 0 | 1 {
  const digit = Number.parseInt(key[1 + (bit >> 2)], 16);
  return ((digit >> (3 - (bit & 3))) & 1) as 0 | 1;
}

/** An approver that holds every user's devices: `*` or `autogroup:member`. */
export function approvesEveryUser(sel: Selector): boolean {
  return sel.kind === 'all' || sel.kind === 'member';
}

/**
 * Advertised prefixes: IPv4 or IPv6 CIDR, written with a prefix length. A prefix with host
 * bits set (`10.0.0.1/24`) is refused rather than masked, so nothing the device meant is
 * silently changed; the exit routes 0.0.0.0/0 and ::/0 are allowed, and prefixes over
 * reserved ranges are refused (reserved-prefixes.ts). Accepted prefixes are stored in
 * canonical text (`FD12:0::/16` → `fd12::/16`) so one network is one route.
 */
import { ApiError } from '../../core/errors.js';
import { parsePrefix } from '../../policy/index.js';
import { reservedReason } from './reserved-prefixes.js';

function canonicalPrefix(text: string): string {
  if (!text.includes('/')) {
    throw new ApiError('invalid_prefix', `"${text}" is not a CIDR prefix: write address/length, e.g. 10.0.0.0/24`);
  }
  const parsed = parsePrefix(text);
  if (!parsed.ok) throw new ApiError('invalid_prefix', `route "${text}" rejected: ${parsed.msg}`);
  const reserved = reservedReason(parsed.prefix);
  if (reserved) throw new ApiError('invalid_prefix', `route "${text}" rejected: it ${reserved}`);
  return parsed.prefix.text;
}

/**
 * The canonical, de-duplicated, sorted set; 400 invalid_prefix on the first bad entry, so a
 * request with one bad prefix changes nothing.
 */
export function canonicalPrefixes(list: readonly string[]): string[] {
  return [...new Set(list.map(canonicalPrefix))].sort();
}

/**
 * What a device advertises (registration, heartbeat, a Tailscale client's map request): the
 * canonical set, and an exit node's default routes as a pair. One of 0.0.0.0/0 and ::/0 alone
 * makes no exit node (a device is one when it serves both) nor a subnet route (policy prefixes
 * ignore default routes), so it would be stored, approved and never used; Tailscale's own CLI
 * refuses it with the same advice (net/netutil.CalcAdvertiseRoutes).
 */
export function advertisedPrefixes(list: readonly string[]): string[] {
  const prefixes = canonicalPrefixes(list);
  const lone = loneDefaultRoute(prefixes);
  if (lone) {
    const [given, missing] = lone;
    throw new ApiError(
      'invalid_prefix',
      `route "${given}" rejected: an exit node advertises both default routes; add ${missing}, or advertise subnets instead`,
    );
  }
  return prefixes;
}

/**
 * What a Tailscale client's map request advertises, as Warren can take it: the entries
 * `advertisedPrefixes` would accept, the others left out instead of refusing the request. A
 * map request is the client's whole connection, and tailscaled retries a refused one forever
 * without a netmap, so one route Warren does not take (a range overlapping the mesh's own, a
 * lone default route sent by something other than Tailscale's CLI) would cut the device off;
 * the routes it may serve still reach its admins (docs/TAILSCALE.md).
 */
export function advertisablePrefixes(list: readonly string[]): string[] {
  const accepted = new Set<string>();
  for (const text of list) {
    try {
      accepted.add(canonicalPrefix(text));
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }
  const prefixes = [...accepted].sort();
  const lone = loneDefaultRoute(prefixes);
  return lone ? prefixes.filter((p) => p !== lone[0]) : prefixes;
}

/** One default route without its pair, and the pair it lacks; undefined when both or neither. */
function loneDefaultRoute(prefixes: readonly string[]): [given: string, missing: string] | undefined {
  const v4 = prefixes.includes('0.0.0.0/0');
  if (v4 === prefixes.includes('::/0')) return undefined;
  return v4 ? ['0.0.0.0/0', '::/0'] : ['::/0', '0.0.0.0/0'];
}

/** The text stored in devices.advertised_routes: one string to compare on each heartbeat. */
export const advertisedText = (prefixes: readonly string[]): string => prefixes.join(',');

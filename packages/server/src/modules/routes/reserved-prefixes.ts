/**
 * Address ranges no device may advertise as a subnet route. Approving a route over the mesh's
 * own ranges would let its router take over peers' addresses (its prefix lands in every
 * viewer's allowedIPs beside the peers' /32s), and loopback, link-local, multicast,
 * unspecified and broadcast addresses are never reachable through a router at all.
 *
 * A default route (`0.0.0.0/0`, `::/0`) contains all of them and is still accepted: it is
 * how a device offers itself as an exit node, and peers treat it apart from subnet routes.
 * Any other prefix that overlaps a reserved range (`100.0.0.0/8`, `64.0.0.0/2`,
 * `fd00::/8`) is refused whole; the device must advertise the parts outside it.
 *
 * An IPv4-mapped IPv6 prefix (`::ffff:10.0.0.0/104`) is refused too, naming the IPv4
 * prefix to advertise instead: packets inside the tunnel are IPv4 or IPv6, never mapped, so
 * such a route would carry nothing, and storing it beside its IPv4 twin would make one
 * network two routes.
 */
// The prefix arithmetic of the policy engine (a pure module), so routes and policy read CIDRs alike.
import { containsPrefix, formatKey, overlaps, type Prefix, parsePrefix } from '../../policy/cidr.js';

interface Reserved {
  prefix: Prefix;
  what: string;
}

function reserved(text: string, what: string): Reserved {
  const parsed = parsePrefix(text);
  if (!parsed.ok) throw new Error(`bad reserved prefix ${text}`);
  return { prefix: parsed.prefix, what };
}

const RESERVED: readonly Reserved[] = [
  reserved('100.64.0.0/10', "the mesh's own device addresses"),
  reserved('fd7a:115c:a1e0::/48', "the mesh's own device addresses"),
  reserved('127.0.0.0/8', 'loopback'),
  reserved('::1/128', 'loopback'),
  reserved('169.254.0.0/16', 'link-local'),
  reserved('fe80::/10', 'link-local'),
  reserved('224.0.0.0/4', 'multicast'),
  reserved('ff00::/8', 'multicast'),
  reserved('0.0.0.0/32', 'the unspecified address'),
  reserved('::/128', 'the unspecified address'),
  reserved('255.255.255.255/32', 'the IPv4 broadcast address'),
];

const MAPPED = reserved('::ffff:0.0.0.0/96', 'IPv4-mapped IPv6');

/** The IPv4 prefix an IPv4-mapped IPv6 prefix stands for (`::ffff:10.0.0.0/104` → `10.0.0.0/8`). */
function mappedV4(prefix: Prefix): string {
  // The last 32 bits of the IPv6 key are the IPv4 address.
  return `${formatKey(`4${prefix.start.slice(-8)}`)}/${prefix.bits - 96}`;
}

function reservedOverlap(prefix: Prefix): string | undefined {
  const hit = RESERVED.find((r) => overlaps(prefix, r.prefix));
  return hit && `overlaps ${hit.prefix.text} (${hit.what})`;
}

/**
 * Why a parsed prefix may not be advertised, or undefined when it may. Default routes pass;
 * everything else is judged by overlap with the reserved ranges.
 */
export function reservedReason(prefix: Prefix): string | undefined {
  if (prefix.bits === 0) return undefined;
  if (prefix.family === 6 && containsPrefix(MAPPED.prefix, prefix)) {
    const v4 = mappedV4(prefix);
    const parsed = parsePrefix(v4);
    const also = parsed.ok && parsed.prefix.bits > 0 ? reservedOverlap(parsed.prefix) : undefined;
    return also
      ? `is IPv4-mapped IPv6 for ${v4}, which Warren refuses too: it ${also}`
      : `is IPv4-mapped IPv6: advertise ${v4} instead`;
  }
  const hit = reservedOverlap(prefix);
  if (hit) return hit;
  if (overlaps(prefix, MAPPED.prefix)) return `overlaps ${MAPPED.prefix.text} (${MAPPED.what} addresses)`;
  return undefined;
}

/** reservedReason for stored canonical text (routes recorded before these ranges were refused). */
export function storedPrefixReason(text: string): string | undefined {
  const parsed = parsePrefix(text);
  return parsed.ok ? reservedReason(parsed.prefix) : 'is not a valid prefix';
}

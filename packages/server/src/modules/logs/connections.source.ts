/**
 * Whose traffic a report may describe. A device reports its own connections, so each entry's
 * `src.addr` is one of the reporter's addresses, or lies inside an approved route that the
 * reporter serves (traffic it forwards for its subnet). Anything else would let one device
 * write entries in another's name, so it refuses the whole batch.
 *
 * A route counts while it is approved and advertised, primary or not: a standby router
 * forwards traffic during a failover. A pending, disabled or withdrawn route does not count,
 * nor does another device's route; an approved default route (an exit node) vouches for
 * internet addresses, never for the mesh's own.
 */

import { invalidRequest } from '../../core/errors.js';
// The prefix arithmetic of the policy engine (a pure module), so routes and logs read CIDRs alike.
import { containsPrefix, type Prefix, parsePrefix } from '../../policy/cidr.js';
import type { Db } from '../../storage/database.js';
import { deviceGone } from '../devices/presence.service.js';
import { reservedReason } from '../routes/reserved-prefixes.js';
import { hostOf, type ParsedEndpoint } from './connections.address.js';
import { reporterSources } from './connections.repository.js';
import type { ParsedConnection } from './connections.validate.js';

function servedPrefixes(texts: readonly string[]): Prefix[] {
  const out: Prefix[] = [];
  for (const text of texts) {
    const parsed = parsePrefix(text);
    // A reserved route stored before such prefixes were refused vouches for nothing.
    if (parsed.ok && reservedReason(parsed.prefix) === undefined) out.push(parsed.prefix);
  }
  return out;
}

/**
 * Whether a route vouches for `src`. An address in a reserved range (another device's mesh
 * address, loopback, …) never is: only a default route could hold it, and an exit node
 * forwards its peers' traffic, it does not send it in their name.
 */
function insideAny(routes: readonly Prefix[], src: ParsedEndpoint): boolean {
  const address = parsePrefix(hostOf(src.text));
  if (!address.ok || reservedReason(address.prefix) !== undefined) return false;
  return routes.some((route) => containsPrefix(route, address.prefix));
}

/**
 * The indexes of the entries whose source is not the reporter's, in order. Its own addresses
 * are told apart by address index, without parsing; the routes are read only once an entry
 * needs them.
 */
export async function foreignSources(
  db: Db,
  reporter: { networkId: string; deviceId: string },
  parsed: readonly ParsedConnection[],
): Promise<number[]> {
  const sources = await reporterSources(db, reporter.networkId, reporter.deviceId);
  if (!sources) throw deviceGone();
  let routes: Prefix[] | undefined;
  const foreign: number[] = [];
  for (let index = 0; index < parsed.length; index++) {
    const src = (parsed[index] as ParsedConnection).src;
    if (src.addrIndex === sources.addrIndex) continue;
    routes ??= servedPrefixes(sources.routes);
    if (!insideAny(routes, src)) foreign.push(index);
  }
  return foreign;
}

/** Refuses the batch (400, naming the first bad entry by `index`) unless every source is the reporter's. */
export async function checkSources(
  db: Db,
  reporter: { networkId: string; deviceId: string },
  parsed: readonly ParsedConnection[],
): Promise<void> {
  const [index] = await foreignSources(db, reporter, parsed);
  if (index === undefined) return;
  const src = (parsed[index] as ParsedConnection).src;
  throw invalidRequest(
    `entries[${index}]: src.addr "${src.text}" is neither an address of this device nor inside an approved ` +
      'route it serves (a device reports only its own traffic); nothing of this batch was stored',
    { index },
  );
}

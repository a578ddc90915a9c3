/**
 * The network as every map stream of one change sees it: the view of the change's head, the
 * presence snapshot and the primary routers, each read once for all of them.
 *
 * A native netmap request reads the head, the served routes and its own row, then settles its
 * device's netmap version (a write): a few queries per device, which a policy change multiplied
 * by every open stream. A stream told of a change already holds the head the change feed read
 * for it, so its map is built from that head (any later change schedules another build); the
 * view and the presence snapshot are cached per head; and the primaries are read once per view
 * and presence snapshot: a route's approval or advertisement moves the netmap epoch (a new
 * view), and which router is primary follows only who is online, which is what the snapshot
 * names. Nothing here is per device, so a change costs the database O(1) reads, not O(streams).
 */
import type { AppContext } from '../../core/context.js';
import { networkView } from './netmap.cache.js';
import { type NetmapHead, netmapHead, servedRoutes } from './netmap.repository.js';
import { type Primaries, primariesOf } from './netmap-primaries.js';
import type { NetworkView } from './netmap-view.js';
import { type PresenceSnapshot, presenceSnapshot } from './presence-snapshot.js';

export interface SharedView {
  head: NetmapHead;
  view: NetworkView;
  presence: PresenceSnapshot;
  primaries: Primaries;
}

/** Per view, the primaries read for the latest presence snapshot seen with it. */
const primariesByView = new WeakMap<NetworkView, { presence: PresenceSnapshot; primaries: Promise<Primaries> }>();

/**
 * The shared view at `head` (the head a change was read at), or at the head read now; undefined
 * when the network is gone.
 */
export async function sharedView(
  ctx: AppContext,
  networkId: string,
  head?: NetmapHead,
): Promise<SharedView | undefined> {
  const { db } = ctx;
  const now = ctx.clock.now();
  const at = head ?? (await netmapHead(db, networkId));
  if (!at) return undefined;
  const [presence, view] = await Promise.all([
    presenceSnapshot(db, networkId, at, now),
    networkView(db, networkId, at),
  ]);
  let held = primariesByView.get(view);
  if (held?.presence !== presence) {
    const primaries = servedRoutes(db, networkId, now).then(primariesOf);
    const entry = { presence, primaries };
    // A failed read is tried again by the next stream rather than kept.
    primaries.catch(() => {
      if (primariesByView.get(view) === entry) primariesByView.delete(view);
    });
    primariesByView.set(view, entry);
    held = entry;
  }
  return { head: at, view, presence, primaries: await held.primaries };
}

/**
 * Heartbeat and disconnect. An online device's heartbeat is one UPDATE (presence, returning the
 * last advertised set); the routes table is touched only when the device advertises a different
 * set.
 * `advertiseRoutes` absent means "unchanged"; `[]` withdraws all. Invalid prefixes are refused
 * before anything is written.
 */
import type { HeartbeatRequest } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { Changes } from '../../core/changes.js';
import type { AppContext } from '../../core/context.js';
import { unauthenticated } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import type { Db } from '../../storage/database.js';
import { netmapEpoch, presenceEpoch } from '../network/epochs.js';
import { onlineSince } from '../network/online.js';
import { advertisedPrefixes, advertisedText } from '../routes/prefixes.js';
import { approvalEntries, routeEvents } from '../routes/route-events.js';
import { advertise } from './advertised-routes.js';
import { crossPresence } from './presence-crossings.js';
import { presenceQueued, staysOffline, staysOnline, writePresence } from './presence-writes.js';

/** The device behind a node credential is gone (deleted, or re-enrolled with a new credential). */
export const deviceGone = () =>
  unauthenticated('the node credential is not valid (the device was deleted or re-enrolled)');

/**
 * Sets a device's presence at `now`, returning its advertised set, or undefined when it is
 * gone. On SQLite heartbeats are committed in batches (presence-writes.ts), and a disconnect
 * of a device whose heartbeat is still queued goes after it. Otherwise the first statement
 * matches only while the device is online as it should end up (the common case: an online
 * device's heartbeat); when it matches nothing, the device is crossing over: the presence
 * epoch moves, with the device logged against it (presence-changes.ts), so every instance's
 * presence snapshot follows it. Crossings are batched per network (presence-crossings.ts).
 */
export async function setPresence(
  ctx: AppContext,
  networkId: string,
  deviceId: string,
  online: boolean,
  now: number,
): Promise<{ advertised_routes: string } | undefined> {
  const presence = { last_seen_at: now, disconnected: online ? 0 : 1 };
  if (ctx.dialect === 'sqlite' && (online || presenceQueued(ctx.db, deviceId))) {
    return writePresence(ctx.db, ctx.clock, networkId, deviceId, presence);
  }
  const stays = online ? staysOnline : staysOffline;
  const [unchanged] = await stays(ctx.db, { id: deviceId, now, cutoff: onlineSince(now) });
  if (unchanged) return unchanged;
  return crossPresence(ctx.db, networkId, deviceId, presence);
}

/**
 * Marks the device online and syncs its advertised routes. The caller answers with the
 * device's netmap version (see netmap.service.ts).
 */
export async function heartbeat(ctx: AppContext, actor: Actor, body: HeartbeatRequest): Promise<void> {
  const { networkId } = actor;
  const deviceId = actor.id!;
  const prefixes = body.advertiseRoutes === undefined ? undefined : advertisedPrefixes(body.advertiseRoutes);
  const now = ctx.clock.now();
  const row = await setPresence(ctx, networkId, deviceId, true, now);
  if (!row) throw deviceGone();
  if (prefixes && advertisedText(prefixes) !== row.advertised_routes) {
    await unitOfWork(ctx, actor, 'route.advertise', async (trx, _now, changes) => {
      await changes.touch(netmapEpoch, [deviceId]);
      const routes = await advertise(trx, networkId, deviceId, prefixes, now);
      const events = await routeEvents(trx, networkId, now, routes);
      return { value: undefined, target: deviceId, events, also: approvalEntries(routes.approved) };
    });
  }
}

/** Offline at once; the disconnect time is the device's last contact. */
export async function disconnect(ctx: AppContext, actor: Actor): Promise<void> {
  if (!(await setPresence(ctx, actor.networkId, actor.id!, false, ctx.clock.now()))) throw deviceGone();
}

/**
 * A suspended user's devices go offline at once (their node credentials are refused from now
 * on, see control/native/node-auth.ts), so every peer's view changes: both epochs move.
 */
export async function disconnectDevicesOf(trx: Db, changes: Changes, networkId: string, userId: string): Promise<void> {
  const result = await trx
    .updateTable('devices')
    .set({ disconnected: 1 })
    .where('network_id', '=', networkId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return;
  await changes.touch(presenceEpoch);
  await changes.touch(netmapEpoch);
}

/**
 * Heartbeat and disconnect. A heartbeat is one UPDATE (presence, returning the last advertised
 * set); the routes table is touched only when the device advertises a different set.
 * `advertiseRoutes` absent means "unchanged"; `[]` withdraws all. Invalid prefixes are refused
 * before anything is written.
 */
import type { HeartbeatRequest } from '@warren/contract';
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { applyChange } from '../../http/change.js';
import { unauthenticated } from '../../http/problem.js';
import { bumpNetmapEpoch } from '../devices/devices.repository.js';
import { advertisedText, canonicalPrefixes } from '../routes/prefixes.js';
import { syncAdvertised } from '../routes/routes.repository.js';

/** The device behind a node credential is gone (deleted, or re-enrolled with a new credential). */
export const deviceGone = () =>
  unauthenticated('the node credential is not valid (the device was deleted or re-enrolled)');

/**
 * Marks the device online and syncs its advertised routes. The caller answers with the
 * device's netmap version, which only computing its view can tell (see netmap.service.ts).
 */
export async function heartbeat(ctx: AppContext, request: FastifyRequest, body: HeartbeatRequest): Promise<void> {
  const { deviceId, networkId } = request.device!;
  const prefixes = body.advertiseRoutes === undefined ? undefined : canonicalPrefixes(body.advertiseRoutes);
  const now = ctx.clock.now();
  const row = await ctx.db
    .updateTable('devices')
    .set({ last_seen_at: now, disconnected: 0 })
    .where('id', '=', deviceId)
    .returning('advertised_routes')
    .executeTakeFirst();
  if (!row) throw deviceGone();
  if (prefixes && advertisedText(prefixes) !== row.advertised_routes) {
    await applyChange(ctx, request, 200, async (trx) => {
      await bumpNetmapEpoch(trx, networkId);
      await syncAdvertised(trx, networkId, deviceId, prefixes, now);
      return { value: undefined, action: 'route.advertise', target: deviceId };
    });
  }
}

/** Offline at once; the disconnect time is the device's last contact. */
export async function disconnect(ctx: AppContext, request: FastifyRequest): Promise<void> {
  const { deviceId } = request.device!;
  const result = await ctx.db
    .updateTable('devices')
    .set({ disconnected: 1, last_seen_at: ctx.clock.now() })
    .where('id', '=', deviceId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) throw deviceGone();
}

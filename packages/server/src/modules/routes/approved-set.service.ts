/**
 * A device's approved routes set as a whole (Tailscale's `POST /device/{id}/routes`): every
 * prefix of the set ends approved, every other route of the device that was approved ends
 * disabled. A prefix the device does not advertise is stored approved but not advertised, so it
 * reaches peers the moment the device advertises it. One transaction, one netmap move, an event
 * per route that changed state.
 */
import type { RouteBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { notFound } from '../../core/errors.js';
import type { EventDraft } from '../../core/events.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { newId } from '../../lib/ids.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import { netmapEpoch } from '../network/epochs.js';
import { canonicalPrefixes } from './prefixes.js';
import { presentRoute } from './routes.presenter.js';
import { listRoutes } from './routes.repository.js';

export async function setApprovedRoutes(
  ctx: AppContext,
  actor: Actor,
  deviceId: string,
  prefixes: readonly string[],
): Promise<RouteBody[]> {
  const { networkId } = actor;
  const wanted = new Set(canonicalPrefixes(prefixes));
  return unitOfWork(ctx, actor, 'route.set_approved', async (trx, now, changes) => {
    await changes.touch(netmapEpoch, [deviceId]);
    const device = await trx
      .selectFrom('devices')
      .select('id')
      .where('network_id', '=', networkId)
      .where('id', '=', deviceId)
      .executeTakeFirst();
    if (!device) throw notFound(`device ${deviceId} does not exist`);
    await advisoryLock(trx, `routes:${deviceId}`);
    const existing = await trx
      .selectFrom('routes')
      .select(['id', 'prefix', 'state'])
      .where('device_id', '=', deviceId)
      .execute();
    const known = new Set(existing.map((r) => r.prefix));
    const approve = existing.filter((r) => wanted.has(r.prefix) && r.state !== 'approved').map((r) => r.id);
    const disable = existing.filter((r) => !wanted.has(r.prefix) && r.state === 'approved').map((r) => r.id);
    const added = [...wanted]
      .filter((prefix) => !known.has(prefix))
      .map((prefix) => ({
        id: newId('route'),
        network_id: networkId,
        device_id: deviceId,
        prefix,
        state: 'approved',
        advertised: 0,
        auto_approved: 0,
        approved_at: now,
        approved_by: actor.name,
        created_at: now,
      }));
    const stamp = { state: 'approved', approved_at: now, approved_by: actor.name, auto_approved: 0 };
    if (approve.length) await trx.updateTable('routes').set(stamp).where('id', 'in', approve).execute();
    if (disable.length) await trx.updateTable('routes').set({ state: 'disabled' }).where('id', 'in', disable).execute();
    if (added.length) await trx.insertInto('routes').values(added).execute();
    const routes = (await listRoutes(trx, networkId, now, { device: deviceId })).map(presentRoute);
    const approvedNow = new Set([...approve, ...added.map((r) => r.id)]);
    const disabledNow = new Set(disable);
    const events = routes.flatMap((route): EventDraft[] => {
      if (approvedNow.has(route.id)) return [{ type: 'route.approved', data: { route } }];
      if (disabledNow.has(route.id)) return [{ type: 'route.disabled', data: { route } }];
      return [];
    });
    return { value: routes, target: deviceId, events };
  });
}

/**
 * The expiry sweep: devices whose login passed `expires_at` are marked expired, leave every
 * netmap (an epoch move, logged per device) and are announced as `device.key_expired`, once
 * each. The conditional update is the claim, so with several instances sweeping at once each
 * device is expired by exactly one of them. Found through the partial index of migration 018,
 * so a pass costs what is due, not the size of the fleet.
 */

import { systemActor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { netmapEpoch } from '../network/epochs.js';
import { deviceDetails } from './device-details.js';

const BATCH = 500;

export async function expireDueLogins(ctx: Pick<AppContext, 'db' | 'clock'>): Promise<number> {
  const now = ctx.clock.now();
  const due = await ctx.db
    .selectFrom('devices')
    .select(['id', 'network_id'])
    .where('key_expired', '=', 0)
    .where('key_expiry_disabled', '=', 0)
    .where('expires_at', '<=', now)
    .limit(BATCH)
    .execute();
  const byNetwork = new Map<string, string[]>();
  for (const row of due) byNetwork.set(row.network_id, [...(byNetwork.get(row.network_id) ?? []), row.id]);
  let expired = 0;
  for (const [networkId, ids] of byNetwork) {
    expired += await unitOfWork(
      ctx,
      systemActor(networkId, 'key-expiry'),
      'device.key_expire',
      async (trx, at, changes) => {
        const claimed = await trx
          .updateTable('devices')
          .set({ key_expired: 1 })
          .where('network_id', '=', networkId)
          .where('id', 'in', ids)
          .where('key_expired', '=', 0)
          .where('key_expiry_disabled', '=', 0)
          .where('expires_at', '<=', at)
          .returning('id')
          .execute();
        if (claimed.length === 0) return { value: 0, target: null, unchanged: true };
        const claimedIds = claimed.map((row) => row.id).sort();
        await changes.touch(netmapEpoch, claimedIds);
        const details = await deviceDetails(trx, networkId, claimedIds, at);
        const events = claimedIds.flatMap((id) => {
          const device = details.get(id);
          return device ? [{ type: 'device.key_expired' as const, data: { device } }] : [];
        });
        return {
          value: claimedIds.length,
          target: claimedIds[0] ?? null,
          also: claimedIds.slice(1).map((id) => ({ action: 'device.key_expire', target: id })),
          events,
        };
      },
    );
  }
  return expired;
}

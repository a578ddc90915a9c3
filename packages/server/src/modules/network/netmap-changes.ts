/**
 * The netmap change log: per network and netmap epoch, which devices the move to that epoch
 * was about (migration 008). It lets every instance patch its view of a network (netmap.cache.ts)
 * by reading again only the devices that changed since the epoch of its view, instead of the
 * whole network, whichever instance made the change.
 *
 * Written for the changes that name the devices they touch (enrollment, deletion, tags, routes)
 * when they are done, in their transaction (core/changes.ts), so a head that shows the new epoch
 * comes with its rows. An epoch with no row at all — a user's role, a policy that approved
 * routes, any change that names no device — is not covered, and an instance whose view is older
 * than it rebuilds the view: forgetting to name devices is slower, never wrong. A policy that
 * approved no route logs its epoch as about no device: the view is carried to it (its devices'
 * rows are as they were; what the policy changes is the view's to work out).
 */
import type { Db } from '../../storage/database.js';
import { epochLog } from './epoch-log.js';

/** The log itself, written through netmapEpoch (epochs.ts). */
export const netmapLog = epochLog('netmap_changes');

/** The row that marks an epoch as about no device at all. */
const NO_DEVICE = '';

/**
 * The devices to name for a netmap move that changed no device's row (a policy that approved no
 * route), so views are carried to it instead of rebuilt.
 */
export const NO_DEVICE_CHANGED: readonly string[] = [NO_DEVICE];

/**
 * The devices changed after epoch `from` up to `to`, or undefined when the log does not cover
 * every epoch in between (pruned, or an epoch that was not about devices).
 */
export async function changedSince(db: Db, networkId: string, from: number, to: number): Promise<string[] | undefined> {
  const ids = await netmapLog.changedSince(db, networkId, from, to);
  return ids?.filter((id) => id !== NO_DEVICE);
}

/** For tests: the log of a network, oldest first. */
export async function netmapChanges(db: Db, networkId: string): Promise<{ epoch: number; deviceId: string }[]> {
  const rows = await db
    .selectFrom('netmap_changes')
    .select(['epoch', 'device_id'])
    .where('network_id', '=', networkId)
    .orderBy('epoch')
    .orderBy('device_id')
    .execute();
  return rows.map((r) => ({ epoch: Number(r.epoch), deviceId: r.device_id }));
}

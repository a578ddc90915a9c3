/**
 * The netmap change log: per network and netmap epoch, which devices the move to that epoch
 * was about (migration 008). It lets every instance patch its view of a network (netmap.cache.ts)
 * by reading again only the devices that changed since the epoch of its view, instead of the
 * whole network, whichever instance made the change.
 *
 * Written by the changes that concern devices (enrollment, deletion, tags, routes), after the
 * epoch bump and in the same transaction, so a head that shows the new epoch comes with its rows.
 * An epoch with no row at all — a policy that changed meaning, a user's role, anything that does
 * not log — is not covered, and an instance whose view is older than it rebuilds the view:
 * forgetting to log is slower, never wrong. A policy replaced by a text of the same meaning logs
 * its epoch as about no device.
 */
import type { Db } from '../../storage/database.js';
import { epochLog } from './epoch-log.js';

export { KEPT_EPOCHS } from './epoch-log.js';

const netmapLog = epochLog('netmap_changes', 'netmap_epoch');

/** The row that marks an epoch as about no device at all (logNoNetmapChange). */
const NO_DEVICE = '';

/**
 * Records that the netmap epoch the transaction `trx` just moved to concerns these devices.
 * Call after bumpNetmapEpoch, inside the same transaction.
 */
export async function logNetmapChange(trx: Db, networkId: string, deviceIds: readonly string[]): Promise<void> {
  await netmapLog.log(trx, networkId, deviceIds);
}

/**
 * Records that the epoch the transaction just moved to changed no device's netmap (a policy
 * replaced by a text of the same meaning), so views are carried to it instead of rebuilt.
 */
export async function logNoNetmapChange(trx: Db, networkId: string): Promise<void> {
  await netmapLog.log(trx, networkId, [NO_DEVICE]);
}

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

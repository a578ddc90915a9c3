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

/**
 * Epochs kept per network. An instance whose view is older than this many changes rebuilds it,
 * which is what it would pay for that many changes anyway.
 */
export const KEPT_EPOCHS = 1_000;
/** Pruning runs on one write in this many, so a change pays for it rarely. */
const PRUNE_EVERY = 64;

/** The row that marks an epoch as about no device at all (logNoNetmapChange). */
const NO_DEVICE = '';

/**
 * Records that the netmap epoch the transaction `trx` just moved to concerns these devices.
 * Call after bumpNetmapEpoch, inside the same transaction.
 */
export async function logNetmapChange(trx: Db, networkId: string, deviceIds: readonly string[]): Promise<void> {
  if (deviceIds.length === 0) return;
  await logEpoch(trx, networkId, [...new Set(deviceIds)]);
}

/**
 * Records that the epoch the transaction just moved to changed no device's netmap (a policy
 * replaced by a text of the same meaning), so views are carried to it instead of rebuilt.
 */
export async function logNoNetmapChange(trx: Db, networkId: string): Promise<void> {
  await logEpoch(trx, networkId, [NO_DEVICE]);
}

async function logEpoch(trx: Db, networkId: string, ids: readonly string[]): Promise<void> {
  const { netmap_epoch } = await trx
    .selectFrom('networks')
    .select('netmap_epoch')
    .where('id', '=', networkId)
    .executeTakeFirstOrThrow();
  const epoch = Number(netmap_epoch);
  for (let i = 0; i < ids.length; i += 500) {
    await trx
      .insertInto('netmap_changes')
      .values(ids.slice(i, i + 500).map((device_id) => ({ network_id: networkId, epoch, device_id })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
  if (epoch % PRUNE_EVERY === 0) {
    await trx
      .deleteFrom('netmap_changes')
      .where('network_id', '=', networkId)
      .where('epoch', '<=', epoch - KEPT_EPOCHS)
      .execute();
  }
}

/**
 * The devices changed after epoch `from` up to `to`, or undefined when the log does not cover
 * every epoch in between (pruned, or an epoch that was not about devices).
 */
export async function changedSince(db: Db, networkId: string, from: number, to: number): Promise<string[] | undefined> {
  if (to <= from) return [];
  if (to - from > KEPT_EPOCHS) return undefined;
  const rows = await db
    .selectFrom('netmap_changes')
    .select(['epoch', 'device_id'])
    .where('network_id', '=', networkId)
    .where('epoch', '>', from)
    .where('epoch', '<=', to)
    .execute();
  const epochs = new Set(rows.map((r) => Number(r.epoch)));
  if (epochs.size !== to - from) return undefined;
  return [...new Set(rows.map((r) => r.device_id))].filter((id) => id !== NO_DEVICE);
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

/**
 * The one owner of the `networks` row: its plan, its address counter and the epochs that tell every instance's
 * caches that netmaps or presence changed. Every bump goes through here, so "what moves the
 * epoch" is answered in one file.
 */
import type { Db } from '../../storage/database.js';

/** Every change that can alter some device's netmap bumps the network's epoch. */
export async function bumpNetmapEpoch(trx: Db, networkId: string): Promise<void> {
  await trx
    .updateTable('networks')
    .set((eb) => ({ netmap_epoch: eb('netmap_epoch', '+', 1) }))
    .where('id', '=', networkId)
    .execute();
}

/** A call took one of the network's devices online or offline: presence snapshots are stale. */
export async function bumpPresenceEpoch(db: Db, networkId: string): Promise<void> {
  await db
    .updateTable('networks')
    .set((eb) => ({ presence_epoch: eb('presence_epoch', '+', 1) }))
    .where('id', '=', networkId)
    .execute();
}

/**
 * A device enrolls (or re-enrolls): it changes netmaps and comes online, so both epochs move.
 * The update also locks the row (on PostgreSQL this serialises the network's enrollments), so
 * the address index, plan and device settings it returns stay current until the transaction ends.
 */
export async function bumpEpochsForEnrollment(
  trx: Db,
  networkId: string,
): Promise<{ nextAddrIndex: number; plan: string; deviceApproval: boolean; nodeKeyExpiry: string; name: string }> {
  const row = await trx
    .updateTable('networks')
    .set((eb) => ({ netmap_epoch: eb('netmap_epoch', '+', 1), presence_epoch: eb('presence_epoch', '+', 1) }))
    .where('id', '=', networkId)
    .returning(['next_addr_index', 'plan', 'device_approval', 'node_key_expiry', 'name'])
    .executeTakeFirstOrThrow();
  return {
    nextAddrIndex: Number(row.next_addr_index),
    plan: row.plan,
    deviceApproval: Number(row.device_approval) !== 0,
    nodeKeyExpiry: row.node_key_expiry,
    name: row.name,
  };
}

/** A new device took address index `taken`; the next one hands out the index after it. */
export async function advanceAddressIndex(trx: Db, networkId: string, taken: number): Promise<void> {
  await trx
    .updateTable('networks')
    .set({ next_addr_index: taken + 1 })
    .where('id', '=', networkId)
    .execute();
}

/** The network's plan (read inside the transaction that enforces one of its limits). */
export async function planOf(db: Db, networkId: string): Promise<string> {
  const row = await db.selectFrom('networks').select('plan').where('id', '=', networkId).executeTakeFirstOrThrow();
  return row.plan;
}

/** Returns false when there is no such network. */
export async function updatePlan(db: Db, networkId: string, plan: string): Promise<boolean> {
  const result = await db.updateTable('networks').set({ plan }).where('id', '=', networkId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

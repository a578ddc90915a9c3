/**
 * The `networks` row: its creation, plan and address counter. Its epochs, which tell every instance's caches
 * that netmaps or presence changed, move in epochs.ts.
 */
import type { Db } from '../../storage/database.js';

/** A new network, with no epoch moved yet and its first address index free. */
export async function insertNetwork(
  trx: Db,
  row: { id: string; name: string; plan: string; now: number },
): Promise<void> {
  await trx
    .insertInto('networks')
    .values({ id: row.id, name: row.name, plan: row.plan, created_at: row.now, next_addr_index: 1, netmap_epoch: 0 })
    .execute();
}

/**
 * An enrollment that took address index `taken` with its epoch move (epochs.ts) turned out to
 * re-enroll a device, which keeps its addresses: the counter goes back to it. The move's row lock
 * is still held, so no other enrollment saw it taken.
 */
export async function giveBackAddressIndex(trx: Db, networkId: string, taken: number): Promise<void> {
  await trx.updateTable('networks').set({ next_addr_index: taken }).where('id', '=', networkId).execute();
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

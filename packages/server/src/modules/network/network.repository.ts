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

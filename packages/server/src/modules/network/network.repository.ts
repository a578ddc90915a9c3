/**
 * The `networks` row's plan and address counter. Its epochs, which tell every instance's caches
 * that netmaps or presence changed, move in epochs.ts.
 */
import type { Db } from '../../storage/database.js';

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

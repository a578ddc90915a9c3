/**
 * One unit of work per change: the change, its audit entry and its events commit in one
 * transaction, or none of them does. A failed audit or event write rolls the change back,
 * so no committed change is without its record and no record exists of a change that did
 * not happen.
 */
import type { AppContext } from '../context.js';
import type { Db } from '../storage/database.js';
import type { Actor } from './actor.js';
import { changeEntry, insertAuditEntries } from './audit-entries.js';

export interface Work<T> {
  value: T;
  /** What the audit entry names as changed: an id, or `acl`. */
  target: string | null;
  /** Nothing changed after all (a sweeper found the work done by another instance): no entry. */
  unchanged?: boolean;
}

export async function unitOfWork<T>(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  actor: Actor,
  action: string,
  fn: (trx: Db, now: number) => Promise<Work<T>>,
): Promise<T> {
  const now = ctx.clock.now();
  const value = await ctx.db.transaction().execute(async (trx) => {
    const work = await fn(trx, now);
    if (work.unchanged) return work.value;
    // Last, as it takes the network's audit lock (see insertAuditEntries).
    await insertAuditEntries(trx, [changeEntry(actor, now, action, work.target)]);
    return work.value;
  });
  actor.request?.onAudited?.();
  return value;
}

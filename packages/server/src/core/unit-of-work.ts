/**
 * One unit of work per change: the change, its audit entry and its events commit in one
 * transaction, or none of them does. A failed audit or event write rolls the change back,
 * so no committed change is without its record and no record exists of a change that did
 * not happen. What the change touches that other instances follow by an epoch (netmaps,
 * presence) it declares to `changes` (changes.ts): the epoch moves and the devices are logged
 * in the same transaction.
 */

import { type Db, isPostgres } from '../storage/database.js';
import type { Actor } from './actor.js';
import { auditLockName, changeEntry, insertAuditEntries } from './audit-entries.js';
import { writeChangeRecords } from './change-records.js';
import { type Changes, inTransaction, loggingLater } from './changes.js';
import type { AppContext } from './context.js';
import { appendEvents, type EventDraft, eventRows } from './events.js';

export interface Work<T> {
  value: T;
  /** What the audit entry names as changed: an id, or `acl`. */
  target: string | null;
  /** More changes the same call made on the way (routes the policy approved), each audited. */
  also?: readonly { action: string; target: string | null }[];
  /** The events of the change (each transition it made), written in its transaction. */
  events?: readonly EventDraft[];
  /** Nothing changed after all (a sweeper found the work done by another instance): no entry, no event. */
  unchanged?: boolean;
}

/** Who is told after a commit that wrote events (the webhook dispatcher of this process). */
const listeners = new Set<() => void>();
export function onEventsCommitted(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The audit entries (none for an observation) and events of a work done. */
function recordsOf<T>(actor: Actor, action: string | null, now: number, work: Work<T>) {
  const entries =
    action === null
      ? []
      : [{ action, target: work.target }, ...(work.also ?? [])].map((entry) =>
          changeEntry(actor, now, entry.action, entry.target),
        );
  return { entries, events: work.events ?? [] };
}

/**
 * Runs `fn` and commits what it changed with its audit entry and events. `action` null: an
 * observation rather than a change (a device seen going offline) that has events but no
 * audit entry.
 */
export async function unitOfWork<T>(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  actor: Actor,
  action: string | null,
  fn: (trx: Db, now: number, changes: Changes) => Promise<Work<T>>,
): Promise<T> {
  // The audit log lists calls in the order they were made: a refusal or a read answered just
  // before this call waits in the queue (http/audit.ts) and would otherwise be numbered after
  // the change's entry, and stamped earlier. The time is taken once they are written. Not for
  // devices: their calls are telemetry, audited like reads, and an enrollment among thousands of
  // heartbeats of its network would write them one small batch at a time.
  if (action !== null && actor.type !== 'device') await actor.request?.recordEarlierCalls?.(actor.networkId);
  const now = ctx.clock.now();
  let wroteEvents = false;
  // A call whose work changed nothing (deleting a revoked key again) writes no change entry:
  // the request's own entry (http/audit.ts) must record it then, so it is not marked audited.
  let wroteEntries = false;
  const value = await ctx.db.transaction().execute(async (trx) => {
    if (isPostgres(trx)) {
      const { value: work, logs } = await loggingLater(trx, actor.networkId, (_, changes) => fn(trx, now, changes));
      const records = work.unchanged ? { entries: [], events: [] } : recordsOf(actor, action, now, work);
      wroteEvents = records.events.length > 0;
      wroteEntries = records.entries.length > 0;
      // One round trip for the logs, the lock, the entries and the events (change-records.ts).
      await writeChangeRecords(
        trx,
        actor.networkId,
        logs.map((log) => ({ insertText: log.epoch.logInsertText, epoch: log.to, deviceIds: log.deviceIds })),
        auditLockName(actor.networkId),
        records.entries,
        eventRows(actor, now, records.events),
      );
      for (const log of logs) await log.epoch.afterLog(trx, actor.networkId, log.to);
      return work.value;
    }
    const work = await inTransaction(trx, actor.networkId, (_, changes) => fn(trx, now, changes));
    if (work.unchanged) return work.value;
    // Last, as they take the network's audit lock (see insertAuditEntries); the events rely
    // on the same lock for their order. (SQLite has one writer: no lock, no round trip to save.)
    const { entries, events } = recordsOf(actor, action, now, work);
    wroteEvents = events.length > 0;
    wroteEntries = entries.length > 0;
    if (entries.length > 0) await insertAuditEntries(trx, entries);
    await appendEvents(trx, actor, now, events);
    return work.value;
  });
  if (wroteEntries) actor.request?.onAudited?.();
  if (wroteEvents) for (const listener of listeners) listener();
  return value;
}

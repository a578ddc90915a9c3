/**
 * Writing audit entries inside a transaction. Every entry written outside the request queue
 * (http/audit.ts) goes through here, so the ordering rule below holds for all of them.
 */
import type { Insertable } from 'kysely';
import { advisoryLock } from '../storage/advisory-lock.js';
import { insertRows } from '../storage/bulk-insert.js';
import type { Db } from '../storage/database.js';
import type { AuditLogTable } from '../storage/schema.js';
import type { Actor } from './actor.js';

export type AuditRow = Insertable<AuditLogTable>;

/**
 * The entry of a change made by `actor`. A change no HTTP call made has method `SYSTEM` and
 * the actor's name as its path (`ephemeral-sweeper`, `warren keys set-limit`).
 */
export function changeEntry(actor: Actor, time: number, action: string, target: string | null): AuditRow {
  return {
    network_id: actor.networkId,
    time,
    key_id: actor.type === 'key' ? actor.id : null,
    key_name: actor.type === 'key' ? actor.name : null,
    device_id: actor.type === 'device' ? actor.id : null,
    user_id: actor.type === 'user' ? actor.id : null,
    user_login: actor.type === 'user' ? actor.name : null,
    method: actor.request?.method ?? 'SYSTEM',
    path: actor.request?.path ?? actor.name ?? '',
    status: actor.request?.status ?? 200,
    client_addr: actor.clientAddr,
    request_id: actor.requestId,
    action,
    target,
  };
}

/**
 * Writes entries inside the caller's transaction, under each of their networks' audit locks,
 * so that within a network sequence order is commit order (a reader holding a cursor never
 * skips an entry that commits late; readers only ever page through one network). Call it as
 * the transaction's last write but the events (which rely on the same lock): every other lock
 * must be taken before these, and these in network order, or writers can deadlock.
 */
export async function insertAuditEntries(trx: Db, rows: readonly AuditRow[]): Promise<void> {
  if (rows.length === 0) return;
  const networks = [...new Set(rows.map((row) => row.network_id ?? ''))].sort();
  for (const networkId of networks) await advisoryLock(trx, auditLockName(networkId));
  await insertRows(trx, 'audit_log', AUDIT_COLUMNS, rows);
}

/** Every column of an entry but its sequence number; the type makes a new column fail to compile until listed. */
const AUDIT_COLUMNS = Object.keys({
  network_id: true,
  time: true,
  key_id: true,
  key_name: true,
  device_id: true,
  user_id: true,
  user_login: true,
  method: true,
  path: true,
  status: true,
  client_addr: true,
  request_id: true,
  action: true,
  target: true,
} satisfies Record<Exclude<keyof AuditRow, 'seq'>, true>) as Exclude<keyof AuditRow, 'seq'>[];

/** The advisory lock that orders a network's audit entries and events (`''`: calls of no network). */
export function auditLockName(networkId: string): string {
  return `audit:${networkId}`;
}

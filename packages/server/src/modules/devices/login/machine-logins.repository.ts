/**
 * SQL of machine logins (migration 023): a login is found by its token's SHA-256, and ends
 * once — approved or refused — by a conditional UPDATE, so two people (or two instances)
 * approving the same URL cannot both win.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../../../storage/database.js';
import type { MachineLoginsTable } from '../../../storage/schema.js';

export type MachineLoginRow = Selectable<MachineLoginsTable>;

/** Ended logins are kept this long past their expiry, so a late visit still says what happened. */
const KEPT_MS = 24 * 60 * 60_000;

export type NewMachineLogin = Omit<
  MachineLoginRow,
  'approved_at' | 'approved_by' | 'network_id' | 'device_id' | 'refusal'
>;

export async function insertMachineLogin(db: Db, row: NewMachineLogin): Promise<void> {
  await db
    .insertInto('machine_logins')
    .values({ ...row, approved_at: null, approved_by: null, network_id: null, device_id: null, refusal: null })
    .execute();
}

/**
 * Drops the logins nobody can use any more: their URL expired a day ago (KEPT_MS), ended or not.
 * Run by the events worker's retention sweep on every instance (events.worker.ts), so the table
 * stays bounded by the logins of the last day however seldom logins start. Indexed by expiry.
 */
export async function pruneMachineLogins(db: Db, now: number): Promise<number> {
  const result = await db
    .deleteFrom('machine_logins')
    .where('expires_at', '<=', now - KEPT_MS)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function machineLoginByHash(db: Db, tokenHash: string): Promise<MachineLoginRow | undefined> {
  return db.selectFrom('machine_logins').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/**
 * Ends a login still open at `now` (inside the transaction that enrolls its device, so a failed
 * enrollment leaves it open); false when it had already ended or expired, and nothing changed.
 */
export async function endMachineLogin(
  db: Db,
  tokenHash: string,
  now: number,
  outcome: { approvedBy: string; networkId: string; refusal?: string },
): Promise<boolean> {
  const result = await db
    .updateTable('machine_logins')
    .set({
      approved_at: now,
      approved_by: outcome.approvedBy,
      network_id: outcome.networkId,
      refusal: outcome.refusal ?? null,
    })
    .where('token_hash', '=', tokenHash)
    .where('approved_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The device an approved login made, for the record (the client finds it by its keys). */
export async function setLoginDevice(db: Db, tokenHash: string, deviceId: string): Promise<void> {
  await db.updateTable('machine_logins').set({ device_id: deviceId }).where('token_hash', '=', tokenHash).execute();
}

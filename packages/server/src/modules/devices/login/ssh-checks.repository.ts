/**
 * SQL of SSH checks (migration 042): a check is found by its token's SHA-256, a confirmation in
 * force by its pair (source, destination, local user), and a check is confirmed once, by a
 * conditional UPDATE, so two confirmations (or two instances) cannot both win.
 */
import type { Selectable } from 'kysely';
import type { Db } from '../../../storage/database.js';
import type { SshChecksTable } from '../../../storage/schema.js';

export type SshCheckRow = Selectable<SshChecksTable>;

/** Checks are kept this long past their expiry, so a late visit still says what happened. */
const KEPT_MS = 24 * 60 * 60_000;

export async function insertSshCheck(db: Db, row: Omit<SshCheckRow, 'approved_at' | 'approved_by'>): Promise<void> {
  await db
    .insertInto('ssh_checks')
    .values({ ...row, approved_at: null, approved_by: null })
    .execute();
}

/**
 * Drops the checks nobody can use any more: their URL expired a day ago (KEPT_MS) and no
 * confirmation of theirs is still in force. Run by the events worker's retention sweep on
 * every instance (events.worker.ts), so the table stays bounded by the checks of the last day
 * and the confirmations of the rules' periods (at most 168 h), however seldom checks start.
 * The expiry index finds the candidates; only a confirmed one's period is read.
 */
export async function pruneSshChecks(db: Db, now: number): Promise<number> {
  const result = await db
    .deleteFrom('ssh_checks')
    .where('expires_at', '<=', now - KEPT_MS)
    .where((eb) => eb.or([eb('approved_at', 'is', null), eb(eb('approved_at', '+', eb.ref('period_ms')), '<=', now)]))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function sshCheckByHash(db: Db, tokenHash: string): Promise<SshCheckRow | undefined> {
  return db.selectFrom('ssh_checks').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Whether the pair was confirmed after `since`. */
export async function confirmedSince(
  db: Db,
  pair: Pick<SshCheckRow, 'network_id' | 'src_device_id' | 'dst_device_id' | 'local_user'>,
  since: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('ssh_checks')
    .select('token_hash')
    .where('network_id', '=', pair.network_id)
    .where('src_device_id', '=', pair.src_device_id)
    .where('dst_device_id', '=', pair.dst_device_id)
    .where('local_user', '=', pair.local_user)
    .where('approved_at', '>', since)
    .executeTakeFirst();
  return row !== undefined;
}

/** Confirms a check still open at `now`; false when it was already confirmed or expired. */
export async function confirmSshCheck(db: Db, tokenHash: string, now: number, by: string): Promise<boolean> {
  const result = await db
    .updateTable('ssh_checks')
    .set({ approved_at: now, approved_by: by })
    .where('token_hash', '=', tokenHash)
    .where('approved_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * SQL of the policy. Each network's policy is a list of immutable versions; the current one is
 * the highest `version` (the unique index on (network_id, version) serves every query here).
 */
import { newId } from '../../lib/ids.js';
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';

export interface PolicyHead {
  version: number;
  etag: string;
}

export interface PolicyVersionRow extends PolicyHead {
  created_at: number;
  created_by: string | null;
}

/**
 * Built once (storage/compiled-query.ts): the head is read by every policy read and every
 * check of the policy cache, and building the query with Kysely on each call cost more than
 * SQLite takes to answer it.
 */
const headOf = compiledQuery(
  (db, p: { networkId: string }) =>
    db
      .selectFrom('policies')
      .select(['version', 'etag'])
      .where('network_id', '=', p.networkId)
      .orderBy('version', 'desc')
      .limit(1),
  { stampedBy: 'networkId' },
);

const versionOf = compiledQuery(
  (db, p: { networkId: string; version: number }) =>
    db
      .selectFrom('policies')
      .select(['version', 'etag', 'text', 'created_at', 'created_by'])
      .where('network_id', '=', p.networkId)
      .where('version', '=', p.version),
  { stampedBy: 'networkId' },
);

const versionsOf = compiledQuery(
  (db, p: { networkId: string }) =>
    db
      .selectFrom('policies')
      .select(['version', 'etag', 'created_at', 'created_by'])
      .where('network_id', '=', p.networkId)
      .orderBy('version', 'desc'),
  { stampedBy: 'networkId' },
);

/** Version and ETag of the current policy, without its text (the hot path of every cache check). */
export async function policyHead(db: Db, networkId: string, stamp?: ReadStamp): Promise<PolicyHead | undefined> {
  const [row] = await headOf(db, { networkId }, stamp);
  return row && { version: Number(row.version), etag: row.etag };
}

export async function policyVersion(
  db: Db,
  networkId: string,
  version: number,
  stamp?: ReadStamp,
): Promise<(PolicyVersionRow & { text: string }) | undefined> {
  const [row] = await versionOf(db, { networkId, version }, stamp);
  return row && { ...row, version: Number(row.version) };
}

export type StoredVersionRow = Awaited<ReturnType<typeof versionsOf>>[number];

/**
 * Every version, newest first, without texts: the rows as the compiled query keeps them (frozen
 * and shared until they change), so what is presented from them can be kept with them.
 */
export async function policyVersions(
  db: Db,
  networkId: string,
  stamp?: ReadStamp,
): Promise<readonly StoredVersionRow[]> {
  return versionsOf(db, { networkId }, stamp);
}

export async function insertPolicyVersion(
  trx: Db,
  row: { networkId: string; version: number; text: string; etag: string; now: number; createdBy: string },
): Promise<void> {
  await trx
    .insertInto('policies')
    .values({
      id: newId('policy'),
      network_id: row.networkId,
      version: row.version,
      text: row.text,
      etag: row.etag,
      created_at: row.now,
      created_by: row.createdBy,
    })
    .execute();
}

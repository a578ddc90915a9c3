/** SQL of keys. State filters are SQL conditions, so a list never loads rows it drops. */
import type { KeyState } from '@warren/contract';
import type { Insertable, Selectable } from 'kysely';
import { keptDerivation } from '../../lib/kept.js';
import { compiledQuery, compiledShapes, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import type { KeysTable } from '../../storage/schema.js';

export async function insertKey(db: Db, row: Insertable<KeysTable>): Promise<void> {
  await db.insertInto('keys').values(row).execute();
}

/**
 * A key by id, built once: `GET /v1/keys/{id}` and `/api/v2`'s read it on every call. Keys move
 * their network's read stamp (migration 033), so on PostgreSQL a call bringing the stamp is
 * answered from what was kept at it.
 */
const keyById = compiledQuery(
  (db, p: { networkId: string; id: string }) =>
    db.selectFrom('keys').selectAll().where('network_id', '=', p.networkId).where('id', '=', p.id),
  { stampedBy: 'networkId' },
);

export async function findKey(db: Db, networkId: string, id: string, stamp?: ReadStamp) {
  return (await keyById(db, { networkId, id }, stamp))[0];
}

/**
 * The key list, built once per filter shape (storage/compiled-query.ts): the list is read on
 * every call of `GET /v1/keys` and `/api/v2`'s key list, and on PostgreSQL a query sent as text
 * is parsed and planned again each time.
 */
const keysOf = compiledShapes(
  (filter: { type?: string; state?: KeyState }) => `${filter.type ? 'type' : ''}:${filter.state ?? ''}`,
  (filter) => (db, p: Record<string, string | number>) => {
    let query = db
      .selectFrom('keys')
      .selectAll()
      .where('network_id', '=', p.networkId as string);
    if (filter.type) query = query.where('type', '=', p.type as string);
    switch (filter.state) {
      case 'revoked':
        query = query.where('revoked_at', 'is not', null);
        break;
      case 'used':
        query = query
          .where('revoked_at', 'is', null)
          .where('type', '=', 'auth')
          .where('reusable', '=', 0)
          .where('used_at', 'is not', null);
        break;
      case 'expired':
      case 'valid':
        // Not revoked and still able to be used; then expired or not by its time.
        query = query
          .where('revoked_at', 'is', null)
          .where((eb) => eb.or([eb('type', '=', 'api'), eb('reusable', '=', 1), eb('used_at', 'is', null)]))
          .where('expires_at', filter.state === 'valid' ? '>' : '<=', p.now as number);
        break;
    }
    return query.orderBy('created_at').orderBy('id');
  },
  { stampedBy: 'networkId' },
);

/**
 * The expiry bound a state filter binds: a whole minute, not the call's millisecond, so that every
 * call of the same minute runs the same query and shares its kept answer (a bound in
 * milliseconds made each call's answer its own). The rows between the bound and the call's time
 * are dropped by `expiredBy`: at most a minute of expiries is read and not shown.
 */
const BOUND_MS = 60_000;

type KeyRow = Selectable<KeysTable>;

/** The rows of a `valid` or `expired` list as they stand at `now`, kept until one of them expires. */
const expiredBy = (wanted: 'valid' | 'expired') =>
  keptDerivation(([rows]: readonly [readonly KeyRow[]], now: number) => ({
    value: rows.filter((row) => row.expires_at > now === (wanted === 'valid')),
    until: rows.reduce((first, row) => (row.expires_at > now ? Math.min(first, row.expires_at) : first), Infinity),
  }));
const asOf = { valid: expiredBy('valid'), expired: expiredBy('expired') };

export async function listKeys(
  db: Db,
  networkId: string,
  now: number,
  filter: { type?: string; state?: KeyState },
  stamp?: ReadStamp,
): Promise<readonly KeyRow[]> {
  const params: Record<string, string | number> = { networkId };
  if (filter.type) params.type = filter.type;
  const { state } = filter;
  if (state !== 'expired' && state !== 'valid') return keysOf(filter)(db, params, stamp);
  const minute = now - (now % BOUND_MS);
  // Valid: expiring after the minute began (a superset); expired: by the minute's end (likewise).
  params.now = state === 'valid' ? minute : minute + BOUND_MS;
  return asOf[state]([await keysOf(filter)(db, params, stamp)], now);
}

/** Returns false when the key was already revoked: nothing changed, so nothing is to be recorded. */
export async function revokeKey(db: Db, networkId: string, id: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('keys')
    .set({ revoked_at: now })
    .where('network_id', '=', networkId)
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Counts an enrollment through an auth key that may still enroll (not revoked, not expired,
 * reusable or never used). Returns false when it may not: nothing is written then.
 */
export async function useAuthKey(trx: Db, keyId: string, now: number): Promise<boolean> {
  const use = await trx
    .updateTable('keys')
    .set((eb) => ({
      uses: eb('uses', '+', 1),
      last_used_at: now,
      used_at: eb.fn.coalesce('used_at', eb.val(now)),
    }))
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .where((eb) => eb.or([eb('reusable', '=', 1), eb('used_at', 'is', null)]))
    .executeTakeFirst();
  return Number(use.numUpdatedRows) > 0;
}

/** Adds `count` uses of an API key, the last at `at` (the batched audit flush, http/audit.ts). */
export async function addKeyUses(trx: Db, keyId: string, use: { at: number; count: number }): Promise<void> {
  await trx
    .updateTable('keys')
    .set((eb) => ({ last_used_at: use.at, uses: eb('uses', '+', use.count) }))
    .where('id', '=', keyId)
    .execute();
}

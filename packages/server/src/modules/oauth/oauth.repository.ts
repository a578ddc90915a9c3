/** SQL of OAuth clients and their access tokens. */
import type { Insertable, Selectable } from 'kysely';
import { compiledShapes, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import type { OAuthClientsTable, OAuthTokensTable } from '../../storage/schema.js';

export type OAuthClientRow = Selectable<OAuthClientsTable>;

export async function insertClient(db: Db, row: Insertable<OAuthClientsTable>): Promise<void> {
  await db.insertInto('oauth_clients').values(row).execute();
}

export async function findClient(db: Db, networkId: string, id: string): Promise<OAuthClientRow | undefined> {
  return db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('network_id', '=', networkId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** A client by id alone: the token endpoint knows no network before the client is found. */
export async function findClientById(db: Db, id: string): Promise<OAuthClientRow | undefined> {
  return db.selectFrom('oauth_clients').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * The network's clients in creation order, revoked ones only when asked: built once per shape,
 * so on SQLite the answer is kept until the next commit, on PostgreSQL per read stamp
 * (migration 035) (`/api/v2`'s key list reads it per call).
 */
const clientsOf = compiledShapes(
  (withRevoked: boolean) => (withRevoked ? 'all' : 'live'),
  (withRevoked) => (db, p: { networkId: string }) => {
    let query = db.selectFrom('oauth_clients').selectAll().where('network_id', '=', p.networkId);
    if (!withRevoked) query = query.where('revoked_at', 'is', null);
    return query.orderBy('created_at').orderBy('id');
  },
  { stampedBy: 'networkId' },
);

/** `stamp`: the calling key's read stamp, under which PostgreSQL keeps the answer (migration 035). */
export async function listClients(
  db: Db,
  networkId: string,
  withRevoked: boolean,
  stamp?: ReadStamp,
): Promise<readonly OAuthClientRow[]> {
  return clientsOf(withRevoked)(db, { networkId }, stamp);
}

export async function updateClient(
  db: Db,
  id: string,
  set: Pick<OAuthClientsTable, 'scopes' | 'tags' | 'description' | 'updated_at' | 'expires_at'>,
): Promise<void> {
  await db.updateTable('oauth_clients').set(set).where('id', '=', id).execute();
}

/** Revokes a client and drops every token it holds, so none of them authenticates again. */
export async function revokeClient(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('oauth_clients').set({ revoked_at: now }).where('id', '=', id).execute();
  await db.deleteFrom('oauth_tokens').where('client_id', '=', id).execute();
}

/** Stores a new token and drops the client's expired ones (work bounded by what the client made). */
export async function insertToken(db: Db, row: Insertable<OAuthTokensTable>, now: number): Promise<void> {
  await db.deleteFrom('oauth_tokens').where('client_id', '=', row.client_id).where('expires_at', '<=', now).execute();
  await db.insertInto('oauth_tokens').values(row).execute();
}

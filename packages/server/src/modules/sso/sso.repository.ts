/**
 * SQL of a network's single sign-on settings. The client secret is stored and read only
 * sealed (client-secret.ts): this file never sees it in the clear.
 */
import { listText, parseList } from '../../lib/json.js';
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';

export interface SsoSettings {
  networkId: string;
  issuer: string;
  clientId: string;
  /** The client secret as stored: sealed, opened only to sign in (openClientSecret). */
  sealedClientSecret: string;
  allowedDomains: string[];
  enforce: boolean;
  updatedAt: number;
}

/** Built once (storage/compiled-query.ts): `GET /v1/network/sso` and every sign-in read it. */
const ssoOf = compiledQuery(
  (db, p: { networkId: string }) => db.selectFrom('sso_configs').selectAll().where('network_id', '=', p.networkId),
  { stampedBy: 'networkId' },
);

export async function findSso(db: Db, networkId: string, stamp?: ReadStamp): Promise<SsoSettings | undefined> {
  const [row] = await ssoOf(db, { networkId }, stamp);
  if (!row) return undefined;
  return {
    networkId: row.network_id,
    issuer: row.issuer,
    clientId: row.client_id,
    sealedClientSecret: row.client_secret,
    allowedDomains: parseList(row.allowed_domains),
    enforce: row.enforce === 1,
    updatedAt: row.updated_at,
  };
}

export async function saveSso(db: Db, sso: SsoSettings): Promise<void> {
  const values = {
    issuer: sso.issuer,
    client_id: sso.clientId,
    client_secret: sso.sealedClientSecret,
    allowed_domains: listText(sso.allowedDomains),
    enforce: sso.enforce ? 1 : 0,
    updated_at: sso.updatedAt,
  };
  await db
    .insertInto('sso_configs')
    .values({ network_id: sso.networkId, ...values })
    .onConflict((oc) => oc.column('network_id').doUpdateSet(values))
    .execute();
}

/** Whether a network signs in only through its identity provider. */
export async function ssoEnforced(db: Db, networkId: string): Promise<boolean> {
  const row = await db
    .selectFrom('sso_configs')
    .select('enforce')
    .where('network_id', '=', networkId)
    .executeTakeFirst();
  return row?.enforce === 1;
}

/**
 * The networks a sign-in names, by id or by name. Names are not unique (each `warren init`
 * may reuse one), so the caller refuses an ambiguous name rather than guess.
 */
export async function networksNamed(db: Db, idOrName: string): Promise<{ id: string; name: string }[]> {
  return db
    .selectFrom('networks')
    .select(['id', 'name'])
    .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
    .limit(2)
    .execute();
}

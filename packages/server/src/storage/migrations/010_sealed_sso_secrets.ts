/**
 * Single sign-on client secrets were stored as given; from here on they are stored only
 * sealed (modules/sso/client-secret.ts). This seals every existing one in place, in the
 * migration's transaction, so no row is left in the clear and none is sealed twice.
 */
import type { Kysely } from 'kysely';
import { sealClientSecret } from '../../modules/sso/client-secret.js';
import type { Db } from '../database.js';

export async function up(migrating: Kysely<unknown>): Promise<void> {
  // Migrations are written against no schema type; at this point the tables are those of Db.
  const db = migrating as unknown as Db;
  const rows = await db.selectFrom('sso_configs').select(['network_id', 'client_secret']).execute();
  for (const row of rows) {
    const sealed = await sealClientSecret(db, row.network_id, row.client_secret);
    await db
      .updateTable('sso_configs')
      .set({ client_secret: sealed })
      .where('network_id', '=', row.network_id)
      .execute();
  }
}

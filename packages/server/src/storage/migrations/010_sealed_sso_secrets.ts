/**
 * Single sign-on client secrets were stored as given; from here on they are stored only
 * sealed (modules/sso/client-secret.ts). This seals every existing one in place, in the
 * migration's transaction, so no row is left in the clear and none is sealed twice.
 *
 * The sealing is a frozen copy of what the live code did when this migration was written
 * (the server secret of lib/server-secret.ts, HKDF-SHA256 for the purpose below, AES-256-GCM
 * bound to the network as in lib/secret-box.ts): a migration must do the same thing on every
 * database it ever runs on, whatever the live code later becomes.
 */
import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../schema.js';

type Db = Kysely<Database>;

const SERVER_SECRET_NAME = 'log-ids';
const PURPOSE = 'warren sso client secret v1';
const VERSION = 'v1.';
const NONCE_BYTES = 12;

/** The server secret, created here when no instance has made it yet (as the live code does). */
async function serverSecret(db: Db): Promise<Buffer> {
  const read = () =>
    db.selectFrom('server_secrets').select('value').where('name', '=', SERVER_SECRET_NAME).executeTakeFirst();
  let row = await read();
  if (!row) {
    await db
      .insertInto('server_secrets')
      .values({ name: SERVER_SECRET_NAME, value: randomBytes(32).toString('hex') })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    row = await read();
  }
  if (!row) throw new Error('the server secret could not be stored');
  return Buffer.from(row.value, 'hex');
}

/** `v1.` + base64url(nonce ‖ ciphertext ‖ tag), the network's id as associated data. */
function seal(key: Buffer, plaintext: string, networkId: string): string {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce).setAAD(Buffer.from(networkId, 'utf8'));
  const sealed = Buffer.concat([nonce, cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return VERSION + sealed.toString('base64url');
}

export async function up(migrating: Kysely<unknown>): Promise<void> {
  // Migrations are written against no schema type; at this point the tables are those of Database.
  const db = migrating as unknown as Db;
  const rows = await db.selectFrom('sso_configs').select(['network_id', 'client_secret']).execute();
  if (rows.length === 0) return;
  const key = Buffer.from(hkdfSync('sha256', await serverSecret(db), Buffer.alloc(0), PURPOSE, 32));
  for (const row of rows) {
    await db
      .updateTable('sso_configs')
      .set({ client_secret: seal(key, row.client_secret, row.network_id) })
      .where('network_id', '=', row.network_id)
      .execute();
  }
}

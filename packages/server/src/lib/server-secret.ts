/**
 * The server secret: 32 random bytes in server_secrets, made by whichever instance needs it
 * first and read by every other, so all instances on one database derive the same keys. Each
 * use derives its own key from it with HKDF-SHA256 and an `info` naming that use, so no two
 * uses share a key: an opaque log id can never be opened as a sealed secret, nor the reverse.
 */
import { hkdfSync, randomBytes } from 'node:crypto';
import type { Db } from '../storage/database.js';

// Named for its first use (log ids); kept so existing databases keep their ids and cursors.
const NAME = 'log-ids';

/** The secret, created on first use; a read first, so a started server writes nothing here. */
export async function loadServerSecret(db: Db): Promise<Buffer> {
  const read = () => db.selectFrom('server_secrets').select('value').where('name', '=', NAME).executeTakeFirst();
  let row = await read();
  if (!row) {
    // Two instances may both find nothing: the first insert wins and both read its value.
    await db
      .insertInto('server_secrets')
      .values({ name: NAME, value: randomBytes(32).toString('hex') })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    row = await read();
  }
  if (!row) throw new Error('the server secret could not be stored');
  return Buffer.from(row.value, 'hex');
}

/** A 256-bit key for one use of the secret (`info` names the use and its version). */
export function deriveKey(secret: Buffer, info: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), info, 32));
}

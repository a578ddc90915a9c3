/**
 * A network's OpenID client secret at rest: sealed (lib/secret-box.ts) under a key of its own
 * derived from the server secret, bound to the network, so the database alone (a backup, a
 * replica, a stolen file) never gives it away. Every instance derives the same key, so any
 * of them can sign people in. It is opened only to redeem a sign-in's code, and never leaves
 * the server: the API has no field for it.
 */
import { ApiError } from '../../core/errors.js';
import { SecretBox, UnreadableSecretError } from '../../lib/secret-box.js';
import { loadServerSecret } from '../../lib/server-secret.js';
import type { Db } from '../../storage/database.js';

const PURPOSE = 'warren sso client secret v1';

async function box(db: Db): Promise<SecretBox> {
  return new SecretBox(await loadServerSecret(db), PURPOSE);
}

/** The sealed text to store for `networkId`'s client secret. */
export async function sealClientSecret(db: Db, networkId: string, secret: string): Promise<string> {
  return (await box(db)).seal(secret, networkId);
}

/** The client secret stored for `networkId`; 503 unavailable when it does not open. */
export async function openClientSecret(db: Db, networkId: string, sealed: string): Promise<string> {
  const secrets = await box(db);
  try {
    return secrets.open(sealed, networkId);
  } catch (error) {
    if (!(error instanceof UnreadableSecretError)) throw error;
    throw new ApiError(
      'unavailable',
      'single sign-on is unavailable: the stored client secret cannot be decrypted with this server secret ' +
        '(altered, copied from another network or database); an administrator must set it again with PUT /v1/network/sso',
    );
  }
}

/**
 * Sign-ins under way: kept server-side under the SHA-256 of their `state` for 10 minutes, and
 * deleted as the browser comes back, so a callback (and its code) can be used once.
 */
import { hashSecret } from '../../lib/secrets.js';
import type { Db } from '../../storage/database.js';
import type { PendingSignIn } from './oidc.js';

export const SIGN_IN_LIFETIME_MS = 10 * 60_000;

export async function savePendingSignIn(
  db: Db,
  input: { networkId: string; pending: PendingSignIn; returnTo: string; now: number },
): Promise<void> {
  await db.deleteFrom('sso_logins').where('expires_at', '<=', input.now).execute();
  await db
    .insertInto('sso_logins')
    .values({
      state_hash: hashSecret(input.pending.state),
      network_id: input.networkId,
      code_verifier: input.pending.codeVerifier,
      nonce: input.pending.nonce,
      return_to: input.returnTo,
      expires_at: input.now + SIGN_IN_LIFETIME_MS,
    })
    .execute();
}

/** The sign-in of a `state`, used up; undefined when unknown, already used or expired. */
export async function takePendingSignIn(
  db: Db,
  state: string,
  now: number,
): Promise<{ networkId: string; pending: PendingSignIn; returnTo: string } | undefined> {
  const row = await db
    .deleteFrom('sso_logins')
    .where('state_hash', '=', hashSecret(state))
    .returningAll()
    .executeTakeFirst();
  if (!row || row.expires_at <= now) return undefined;
  return {
    networkId: row.network_id,
    pending: { state, nonce: row.nonce, codeVerifier: row.code_verifier },
    returnTo: row.return_to,
  };
}

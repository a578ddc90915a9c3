/**
 * One-time sign-in links (`warren console login`), for networks that do not enforce single
 * sign-on: 256 random bits, kept as their SHA-256, valid for 10 minutes and for one use
 * (the row is deleted as it is redeemed, so two instances cannot both redeem it).
 */
import { randomBytes } from 'node:crypto';
import { hashSecret } from '../../lib/secrets.js';
import type { Db } from '../../storage/database.js';

export const LINK_LIFETIME_MS = 10 * 60_000;

export async function createLoginLink(db: Db, networkId: string, userId: string, now: number): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await db.deleteFrom('login_links').where('expires_at', '<=', now).execute();
  await db
    .insertInto('login_links')
    .values({
      token_hash: hashSecret(token),
      network_id: networkId,
      user_id: userId,
      expires_at: now + LINK_LIFETIME_MS,
    })
    .execute();
  return token;
}

/** The link's network and user if it is live; it is used up either way. */
export async function redeemLoginLink(
  db: Db,
  token: string,
  now: number,
): Promise<{ networkId: string; userId: string } | undefined> {
  const row = await db
    .deleteFrom('login_links')
    .where('token_hash', '=', hashSecret(token))
    .returning(['network_id', 'user_id', 'expires_at'])
    .executeTakeFirst();
  if (!row || row.expires_at <= now) return undefined;
  return { networkId: row.network_id, userId: row.user_id };
}

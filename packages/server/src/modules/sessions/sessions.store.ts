/**
 * Console sessions, kept in the database so every instance sees the same ones. The cookie
 * carries 256 random bits; the row holds only their SHA-256. A session lasts 12 hours, ends
 * after an hour without a call, and ends at once when its user is removed, suspended or
 * given another role (checked on every call against the user's row, not trusted from the
 * session's own).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { hashSecret } from '../../lib/secrets.js';
import type { Db } from '../../storage/database.js';

export const SESSION_LIFETIME_MS = 12 * 3_600_000;
export const SESSION_IDLE_MS = 3_600_000;
/** last_used_at is written at most this often, so a busy console does not write per call. */
const TOUCH_EVERY_MS = 60_000;

/** The person a sign-in (single sign-on or a one-time link) opens a session for. */
export interface SigningInUser {
  networkId: string;
  id: string;
  loginName: string;
  role: string;
}

export interface SessionUser {
  networkId: string;
  userId: string;
  loginName: string;
  role: string;
  expiresAt: number;
}

export interface OpenedSession {
  secret: string;
  csrfToken: string;
  expiresAt: number;
}

/** The CSRF token of a session: derived from its secret, so nothing more is stored. */
export function csrfTokenOf(secret: string): string {
  return createHmac('sha256', secret).update('warren csrf').digest('base64url');
}

export function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export async function openSession(
  db: Db,
  input: { networkId: string; userId: string; role: string; method: 'sso' | 'link'; now: number },
): Promise<OpenedSession> {
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = input.now + SESSION_LIFETIME_MS;
  await db
    .insertInto('sessions')
    .values({
      secret_hash: hashSecret(secret),
      network_id: input.networkId,
      user_id: input.userId,
      role: input.role,
      method: input.method,
      created_at: input.now,
      last_used_at: input.now,
      expires_at: expiresAt,
    })
    .execute();
  return { secret, csrfToken: csrfTokenOf(secret), expiresAt };
}

/** The live session of a cookie's secret, or undefined (and a dead one is deleted). */
export async function findSession(db: Db, secret: string, now: number): Promise<SessionUser | undefined> {
  const hash = hashSecret(secret);
  const row = await db
    .selectFrom('sessions')
    .leftJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.network_id',
      'sessions.user_id',
      'sessions.role',
      'sessions.last_used_at',
      'sessions.expires_at',
      'users.login_name',
      'users.role as user_role',
      'users.status',
      'users.network_id as user_network_id',
    ])
    .where('sessions.secret_hash', '=', hash)
    .executeTakeFirst();
  if (!row) return undefined;
  const alive =
    row.expires_at > now &&
    row.last_used_at + SESSION_IDLE_MS > now &&
    row.user_network_id === row.network_id &&
    row.status === 'active' &&
    row.user_role === row.role;
  if (!alive || !row.login_name) {
    await db.deleteFrom('sessions').where('secret_hash', '=', hash).execute();
    return undefined;
  }
  if (now - row.last_used_at >= TOUCH_EVERY_MS) {
    await db.updateTable('sessions').set({ last_used_at: now }).where('secret_hash', '=', hash).execute();
  }
  return {
    networkId: row.network_id,
    userId: row.user_id,
    loginName: row.login_name,
    role: row.role,
    expiresAt: row.expires_at,
  };
}

export async function endSession(db: Db, secret: string): Promise<void> {
  await db.deleteFrom('sessions').where('secret_hash', '=', hashSecret(secret)).execute();
}

/** Ends every session of a user (suspension, removal, a role change), in the caller's transaction. */
export async function endUserSessions(db: Db, userId: string): Promise<void> {
  await db.deleteFrom('sessions').where('user_id', '=', userId).execute();
}

/**
 * Ends the sessions of a network opened with one-time links, in the caller's transaction: once
 * the network enforces single sign-on, only its identity provider may vouch for whoever holds
 * the console, and a person it has since refused must not keep a link's session for 12 hours.
 */
export async function endLinkSessions(db: Db, networkId: string): Promise<void> {
  await db.deleteFrom('sessions').where('network_id', '=', networkId).where('method', '=', 'link').execute();
}

/** Sessions past their lifetime or idle limit: nothing reads them again. */
export async function sweepSessions(db: Db, now: number): Promise<void> {
  await db
    .deleteFrom('sessions')
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_used_at', '<=', now - SESSION_IDLE_MS)]))
    .execute();
}

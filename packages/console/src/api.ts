/**
 * The console's one client: the typed client in session mode (the HttpOnly cookie
 * authenticates; no API key is ever held in the browser). The CSRF token comes from /v1/me.
 */
import { Warren, WarrenError } from '@warren/client';
import { type MeBody, type Role, roleScopesBeyond, type Scope } from '@warren/contract';

const session: { csrfToken?: string } = {};
export const api = new Warren({ url: window.location.origin, session, maxRetries: 1 });

export async function loadMe(): Promise<MeBody> {
  const me = await api.network.me();
  session.csrfToken = me.csrfToken;
  return me;
}

export async function signOut(): Promise<void> {
  await api.http.raw('POST', '/auth/logout');
  session.csrfToken = undefined;
}

/** What the signed-in principal may do, from its scopes (the server enforces the same). */
export interface Can {
  /** Write scopes: devices, acls, keys, users, webhooks; `all` holds them all. */
  write: (scope: 'devices' | 'acls' | 'keys' | 'users' | 'webhooks') => boolean;
  /** Reads beyond one's own devices (every scope but a member's none). */
  read: boolean;
  all: boolean;
  ownDevicesOnly: boolean;
  /** Whether the principal may give a key this scope: only one it holds (`all` holds every one). */
  grants: (scope: Scope) => boolean;
  /** Whether the principal may give a role, or take it away: only with every scope of it. */
  gives: (role: Role) => boolean;
}

export function permissions(me: MeBody): Can {
  const scopes = new Set<string>(me.scopes);
  const all = scopes.has('all');
  return {
    all,
    write: (scope) => all || scopes.has(scope),
    read: scopes.size > 0,
    ownDevicesOnly: me.ownDevicesOnly,
    grants: (scope) => all || scopes.has(scope),
    gives: (role) => roleScopesBeyond(me.scopes, role).length === 0,
  };
}

export function messageOf(error: unknown): string {
  if (error instanceof WarrenError) return `${error.detail} (${error.code})`;
  return error instanceof Error ? error.message : String(error);
}

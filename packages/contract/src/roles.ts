/**
 * What each role may do, as scopes (API.md, "People"): a console session holds its user's.
 * A member holds none: the server lets them read and delete their own devices, nothing else.
 */
import type { Role, Scope } from './formats.js';

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  owner: ['all'],
  admin: ['all'],
  'network-admin': ['read', 'acls', 'devices'],
  'it-admin': ['read', 'devices', 'keys', 'users'],
  auditor: ['read'],
  member: [],
};

/**
 * The scopes of `role` that `held` lacks: none means the holder may give the role. Nobody gives
 * more than they hold, as no key grants a scope it lacks: without this, whoever manages users
 * could make themselves an owner.
 */
export function roleScopesBeyond(held: readonly Scope[], role: Role): Scope[] {
  return held.includes('all') ? [] : ROLE_SCOPES[role].filter((scope) => !held.includes(scope));
}

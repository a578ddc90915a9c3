/**
 * What a console session may do: the scopes of its user's role. A member holds no scope;
 * member-devices.ts lets them read and delete their own devices, and nothing else.
 */
import type { Role, Scope } from '@warren/contract';

const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  owner: ['all'],
  admin: ['all'],
  'network-admin': ['read', 'acls', 'devices'],
  'it-admin': ['read', 'devices', 'keys', 'users'],
  auditor: ['read'],
  member: [],
};

export function scopesOfRole(role: string): Scope[] {
  return [...(ROLE_SCOPES[role as Role] ?? [])];
}

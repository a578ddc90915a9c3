/**
 * What a console session may do: the scopes of its user's role (the contract's table). A member
 * holds no scope; member-devices.ts lets them read and delete their own devices, and nothing else.
 */
import { ROLE_SCOPES, type Role, type Scope } from '@warren/contract';

export function scopesOfRole(role: string): Scope[] {
  return [...(ROLE_SCOPES[role as Role] ?? [])];
}

// Who may apply a tag: the policy's tagOwners, resolved against the network's users.

import { ADMIN_ROLES } from './subjects.js';
import type { CompiledPolicy, PolicyRole, PolicyUser } from './types.js';

/** Roles that may apply any tag defined in tagOwners, as in Tailscale's admin console. */
const TAG_ANY_ROLES: ReadonlySet<PolicyRole> = new Set(['owner', 'admin', 'network-admin']);

/**
 * The owners of `tag`: login names (groups and autogroup:admin / autogroup:member resolved
 * against `users`), plus `tag:…` entries for tags listed as owners (devices carrying such a tag
 * may apply this one). Empty when the tag is not in tagOwners.
 */
export function tagOwners(policy: CompiledPolicy, tag: string, users: readonly PolicyUser[]): Set<string> {
  const out = new Set<string>();
  for (const owner of policy.tagOwners.get(tag) ?? []) {
    switch (owner.kind) {
      case 'user':
        out.add(owner.login);
        break;
      case 'group':
        for (const login of policy.groups.get(owner.name) ?? []) out.add(login);
        break;
      case 'tag':
        out.add(owner.tag);
        break;
      case 'admin':
        for (const u of users) if (ADMIN_ROLES.has(u.role)) out.add(u.login);
        break;
      case 'member':
        for (const u of users) out.add(u.login);
        break;
    }
  }
  return out;
}

export interface TagActor {
  user: PolicyUser | null;
  /** An API key of the network: may apply any tag that exists in tagOwners. */
  isAdminKey: boolean;
  /** Tags of the acting device, for tags owned by other tags. */
  deviceTags?: readonly string[];
}

export interface TagCheck {
  ok: boolean;
  /** Tags that are not keys of tagOwners: nobody may apply them. */
  unknown: string[];
  /** Tags that exist but that the actor does not own. */
  notOwned: string[];
}

/**
 * Whether `actor` may apply every one of `tags`. A user may apply a tag whose owners name them
 * (directly, through a group, autogroup:admin for the owner and admin roles, autogroup:member);
 * users with the owner, admin or network-admin role may apply any defined tag, as in Tailscale.
 */
export function canApplyTags(policy: CompiledPolicy, tags: readonly string[], actor: TagActor): TagCheck {
  const unknown: string[] = [];
  const notOwned: string[] = [];
  const user = actor.user;
  const groups = new Set(user ? (policy.userGroups.get(user.login) ?? []) : []);
  for (const tag of tags) {
    const owners = policy.tagOwners.get(tag);
    if (!owners) {
      unknown.push(tag);
      continue;
    }
    if (actor.isAdminKey || (user && TAG_ANY_ROLES.has(user.role))) continue;
    const owned = owners.some((o) => {
      if (o.kind === 'tag') return actor.deviceTags?.includes(o.tag) ?? false;
      if (!user) return false;
      if (o.kind === 'user') return o.login === user.login;
      if (o.kind === 'group') return groups.has(o.name);
      if (o.kind === 'admin') return ADMIN_ROLES.has(user.role);
      return o.kind === 'member';
    });
    if (!owned) notOwned.push(tag);
  }
  return { ok: unknown.length === 0 && notOwned.length === 0, unknown, notOwned };
}

/**
 * Whether a user may put the tags a machine asks for (`tailscale up --advertise-tags`): each
 * must be owned by that user in the policy's tagOwners. Shared by an auth key's enrollment (the
 * key's user) and a person's login (the user the device becomes).
 */
import type { AppContext } from '../../../core/context.js';
import { canApplyTags, type PolicyRole } from '../../../policy/index.js';
import { currentPolicy } from '../../acl/policy-cache.js';

/** Why the user may not apply these tags, or undefined when it may. */
export async function tagRefusal(
  ctx: AppContext,
  networkId: string,
  userId: string | null,
  tags: readonly string[],
): Promise<string | undefined> {
  const user = userId
    ? await ctx.db
        .selectFrom('users')
        .select(['login_name', 'role'])
        .where('id', '=', userId)
        .where('network_id', '=', networkId)
        .executeTakeFirst()
    : undefined;
  const { compiled } = await currentPolicy(ctx.db, networkId);
  const check = canApplyTags(compiled, tags, {
    user: user ? { login: user.login_name, role: user.role as PolicyRole } : null,
    isAdminKey: false,
  });
  if (check.ok) return undefined;
  const bad = [...check.unknown, ...check.notOwned];
  return `requested tags [${bad.join(', ')}] are not owned by ${user?.login_name ?? 'this auth key'} in the policy's tagOwners`;
}

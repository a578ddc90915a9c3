/**
 * Who a verified email is in a network: its user, or — when the email's domain is one the
 * network allows — a new `member` (within the plan's seats, like any other new user).
 */

import { systemActor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError, unauthenticated } from '../../core/errors.js';
import type { SigningInUser } from '../sessions/sessions.store.js';
import { createUser } from '../users/users.service.js';
import type { VerifiedIdentity } from './oidc.js';
import type { SsoSettings } from './sso.repository.js';

export async function userOfIdentity(
  ctx: AppContext,
  sso: SsoSettings,
  identity: VerifiedIdentity,
): Promise<SigningInUser> {
  const { networkId } = sso;
  const user = await ctx.db
    .selectFrom('users')
    .select(['id', 'login_name', 'role', 'status'])
    .where('network_id', '=', networkId)
    .where('login_name', '=', identity.email)
    .executeTakeFirst();
  if (user) {
    if (user.status !== 'active') throw unauthenticated(`${identity.email} is suspended in this network`);
    return { networkId, id: user.id, loginName: user.login_name, role: user.role };
  }
  const domain = identity.email.slice(identity.email.lastIndexOf('@') + 1);
  if (!sso.allowedDomains.includes(domain)) {
    throw new ApiError(
      'access_denied',
      `${identity.email} is not a user of this network, and ${domain} is not one of its allowed domains`,
    );
  }
  const created = await createUser(ctx, systemActor(networkId, 'single sign-on'), {
    loginName: identity.email,
    ...(identity.name ? { displayName: identity.name.slice(0, 128) } : {}),
    role: 'member',
  });
  return { networkId, id: created.id, loginName: created.loginName, role: created.role };
}

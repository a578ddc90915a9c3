/**
 * `warren console login --network N --user EMAIL`, run by an operator on the server's machine:
 * a one-time sign-in link for a person of a network that does not enforce single sign-on.
 */
import { ApiError, invalidRequest, notFound } from '../../core/errors.js';
import type { Db } from '../../storage/database.js';
import { createLoginLink, LINK_LIFETIME_MS } from '../sessions/login-links.js';
import { networksNamed, ssoEnforced } from './sso.repository.js';

export async function consoleLoginLink(
  db: Db,
  input: { network: string; loginName: string; now: number },
): Promise<{ token: string; expiresAt: number }> {
  const networks = await networksNamed(db, input.network);
  if (networks.length > 1) throw invalidRequest(`several networks are named "${input.network}"; use its id`);
  const network = networks[0];
  if (!network) throw notFound(`network "${input.network}" does not exist`);
  if (await ssoEnforced(db, network.id)) {
    throw new ApiError('sso_required', `network "${network.name}" signs in only through its identity provider`);
  }
  const user = await db
    .selectFrom('users')
    .select(['id', 'status'])
    .where('network_id', '=', network.id)
    .where('login_name', '=', input.loginName.trim().toLowerCase())
    .executeTakeFirst();
  if (!user) throw notFound(`network "${network.name}" has no user "${input.loginName}"`);
  if (user.status !== 'active') throw new ApiError('invalid_state', `user "${input.loginName}" is suspended`);
  const token = await createLoginLink(db, network.id, user.id, input.now);
  return { token, expiresAt: input.now + LINK_LIFETIME_MS };
}

/**
 * `GET /auth/link?token=…` redeems a one-time sign-in link (refused on a network that enforces
 * single sign-on); `POST /auth/logout` ends the session. Browsers call these, not API clients:
 * they stay out of /v1 and of the OpenAPI document.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ApiError, unauthenticated } from '../../core/errors.js';
import { redeemLoginLink } from '../../modules/sessions/login-links.js';
import { csrfTokenOf, endSession, sameToken } from '../../modules/sessions/sessions.store.js';
import { ssoEnforced } from '../../modules/sso/sso.repository.js';
import { limitByAddress } from '../address-limit.js';
import { clearCookie, readCookie, SESSION_COOKIE } from '../session-cookie.js';
import { startSession } from '../sign-in.js';
import { type SignInProblem, signInProblemPage } from '../sign-in-problems.js';

const LinkQuery = Type.Object({ token: Type.String({ minLength: 1, maxLength: 128 }) });

export async function sessionRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.addHook('preHandler', limitByAddress);

  app.get<{ Querystring: { token: string } }>(
    '/auth/link',
    { config: { auth: 'none' }, schema: { hide: true, querystring: LinkQuery } },
    async (request, reply) => {
      const now = ctx.clock.now();
      // A person opened the link: a refusal is a page that says what happened, not a JSON body.
      const refuse = (problem: SignInProblem, error: ApiError) => signInProblemPage(request, reply, error, problem);
      const link = await redeemLoginLink(ctx.db, request.query.token, now);
      if (!link) {
        return refuse(
          'link_invalid',
          unauthenticated('this sign-in link is unknown, expired or already used; ask for a new one'),
        );
      }
      if (await ssoEnforced(ctx.db, link.networkId)) {
        return refuse(
          'sso_required',
          new ApiError('sso_required', 'this network signs in only through its identity provider (/auth/login)'),
        );
      }
      const user = await ctx.db
        .selectFrom('users')
        .select(['id', 'login_name', 'role', 'status'])
        .where('id', '=', link.userId)
        .where('network_id', '=', link.networkId)
        .executeTakeFirst();
      if (user?.status !== 'active') {
        return refuse('user_inactive', unauthenticated('the user of this link was removed or suspended'));
      }
      await startSession(
        request,
        reply,
        { networkId: link.networkId, id: user.id, loginName: user.login_name, role: user.role },
        'link',
        303,
      );
      return reply.redirect('/', 303);
    },
  );

  app.post('/auth/logout', { config: { auth: 'none' }, schema: { hide: true } }, async (request, reply) => {
    const secret = readCookie(request, SESSION_COOKIE);
    if (secret) {
      const sent = request.headers['x-csrf-token'];
      if (typeof sent !== 'string' || !sameToken(sent, csrfTokenOf(secret))) {
        throw new ApiError('csrf_failed', "signing out needs the session's CSRF token in X-CSRF-Token");
      }
      await endSession(ctx.db, secret);
    }
    clearCookie(request, reply, SESSION_COOKIE);
    return reply.code(204).send();
  });
}

/**
 * The browser's side of single sign-on: `GET /auth/login?network=NAME[&returnTo=/path]` sends
 * it to the network's OpenID provider; `GET /auth/callback` is where the provider sends it
 * back. The `state` is kept server-side and, in a short-lived cookie, by the browser that
 * started the sign-in: a callback from another browser (a planted code) is refused.
 * Outside /v1 and the OpenAPI document: browsers call these, not API clients.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { invalidRequest, notFound, unauthenticated } from '../../core/errors.js';
import { sameToken } from '../../modules/sessions/sessions.store.js';
import { beginSignIn, finishSignIn } from '../../modules/sso/oidc.js';
import { safeReturnTo } from '../../modules/sso/return-to.js';
import { findSso, networksNamed } from '../../modules/sso/sso.repository.js';
import { SIGN_IN_LIFETIME_MS, savePendingSignIn, takePendingSignIn } from '../../modules/sso/sso-logins.repository.js';
import { userOfIdentity } from '../../modules/sso/sso-users.js';
import { limitByAddress } from '../address-limit.js';
import { callbackUrl, publicBase } from '../public-url.js';
import { clearCookie, readCookie, SSO_STATE_COOKIE, setCookie } from '../session-cookie.js';
import { startSession } from '../sign-in.js';

const STATE_COOKIE_PATH = '/auth';

const LoginQuery = Type.Object({
  network: Type.String({ minLength: 1, maxLength: 128 }),
  returnTo: Type.Optional(Type.String({ maxLength: 2048 })),
});
// Providers add parameters of their own (session_state, iss): accepted and ignored.
const CallbackQuery = Type.Object({ state: Type.Optional(Type.String({ maxLength: 512 })) });

export async function ssoLoginRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.addHook('preHandler', limitByAddress);

  app.get<{ Querystring: { network: string; returnTo?: string } }>(
    '/auth/login',
    { config: { auth: 'none' }, schema: { hide: true, querystring: LoginQuery } },
    async (request, reply) => {
      const networks = await networksNamed(ctx.db, request.query.network);
      if (networks.length > 1) {
        throw invalidRequest(`several networks are named "${request.query.network}"; sign in with the network's id`);
      }
      const network = networks[0];
      const sso = network && (await findSso(ctx.db, network.id));
      if (!network || !sso) throw notFound(`network "${request.query.network}" has no single sign-on`);
      const { url, pending } = await beginSignIn(ctx, sso, callbackUrl(request));
      await savePendingSignIn(ctx.db, {
        networkId: network.id,
        pending,
        returnTo: safeReturnTo(request.query.returnTo),
        now: ctx.clock.now(),
      });
      setCookie(request, reply, SSO_STATE_COOKIE, pending.state, {
        maxAgeSeconds: SIGN_IN_LIFETIME_MS / 1000,
        path: STATE_COOKIE_PATH,
      });
      return reply.redirect(url, 302);
    },
  );

  app.get<{ Querystring: { state?: string } }>(
    '/auth/callback',
    { config: { auth: 'none' }, schema: { hide: true, querystring: CallbackQuery } },
    async (request, reply) => {
      const { state } = request.query;
      const browserState = readCookie(request, SSO_STATE_COOKIE);
      clearCookie(request, reply, SSO_STATE_COOKIE, STATE_COOKIE_PATH);
      if (!state || !browserState || !sameToken(state, browserState)) {
        throw unauthenticated('the sign-in was not started by this browser (state mismatch); start again');
      }
      const signIn = await takePendingSignIn(ctx.db, state, ctx.clock.now());
      if (!signIn) throw unauthenticated('this sign-in is unknown, expired or already used; start again');
      const sso = await findSso(ctx.db, signIn.networkId);
      if (!sso) throw unauthenticated('single sign-on was turned off for this network');
      const identity = await finishSignIn(
        ctx,
        sso,
        new URL(request.url, publicBase(request, 'single sign-on')),
        signIn.pending,
      );
      const user = await userOfIdentity(ctx, sso, identity);
      await startSession(request, reply, user, 'sso', 303);
      return reply.redirect(signIn.returnTo, 303);
    },
  );
}

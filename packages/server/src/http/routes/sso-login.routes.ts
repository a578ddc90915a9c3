/**
 * The browser's side of single sign-on: `GET /auth/login?network=NAME[&returnTo=/path]` sends
 * it to the network's OpenID provider; `GET /auth/callback` is where the provider sends it
 * back. The `state` is kept server-side and, in a short-lived cookie, by the browser that
 * started the sign-in: a callback from another browser (a planted code) is refused.
 * Outside /v1 and the OpenAPI document: browsers call these, not API clients.
 */
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { ApiError, invalidRequest, notFound, unauthenticated } from '../../core/errors.js';
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
import { type SignInProblem, signInProblemPage } from '../sign-in-problems.js';

const STATE_COOKIE_PATH = '/auth';

const LoginQuery = Type.Object({
  network: Type.String({ minLength: 1, maxLength: 128 }),
  returnTo: Type.Optional(Type.String({ maxLength: 2048 })),
});
// Providers add parameters of their own (session_state, iss): accepted and ignored.
const CallbackQuery = Type.Object({ state: Type.Optional(Type.String({ maxLength: 512 })) });

/** The page a refused callback shows: by the step that refused, and for the user's, by why. */
function problemAt(step: 'restart' | 'provider' | 'user', error: unknown): SignInProblem {
  if (step === 'restart') return 'sso_restart';
  if (step === 'provider') return 'sso_failed';
  // userOfIdentity: a suspended user is unauthenticated; no place in the network is a 403.
  return error instanceof ApiError && error.code === 'unauthenticated' ? 'sso_inactive' : 'sso_denied';
}

export async function ssoLoginRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.addHook('preHandler', limitByAddress);

  app.get<{ Querystring: { network: string; returnTo?: string } }>(
    '/auth/login',
    { config: { auth: 'none' }, schema: { hide: true, querystring: LoginQuery } },
    async (request, reply) => {
      const networks = await networksNamed(ctx.db, request.query.network);
      const network = networks[0];
      const sso = network && (await findSso(ctx.db, network.id));
      if (networks.length > 1 || !network || !sso) {
        const error =
          networks.length > 1
            ? invalidRequest(`several networks are named "${request.query.network}"; sign in with the network's id`)
            : notFound(`network "${request.query.network}" has no single sign-on`);
        return signInProblemPage(request, reply, error, 'sso_network');
      }
      let begun: Awaited<ReturnType<typeof beginSignIn>>;
      try {
        begun = await beginSignIn(ctx, sso, callbackUrl(request));
      } catch (error) {
        return signInProblemPage(request, reply, error, 'sso_failed');
      }
      const { url, pending } = begun;
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
      // Which step refused, for the page a person is shown (sign-in-problems.ts).
      let step: 'restart' | 'provider' | 'user' = 'restart';
      try {
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
        step = 'provider';
        const identity = await finishSignIn(
          ctx,
          sso,
          new URL(request.url, publicBase(request, 'single sign-on')),
          signIn.pending,
        );
        step = 'user';
        const user = await userOfIdentity(ctx, sso, identity);
        await startSession(request, reply, user, 'sso', 303);
        return reply.redirect(signIn.returnTo, 303);
      } catch (error) {
        return signInProblemPage(request, reply, error, problemAt(step, error));
      }
    },
  );
}

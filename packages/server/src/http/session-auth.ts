/**
 * A console session as the principal of a `/v1` call: the session cookie → the person, with
 * the scopes of their role. Every unsafe method must also carry the session's CSRF token in
 * `X-CSRF-Token` (a cookie is sent by the browser whoever made the page; the header only by
 * our own script). Sessions are rate-limited per person, with a budget of their own (a person
 * clicking through the console's pages, not a script: settings.sessionRateLimit).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, unauthenticated } from '../core/errors.js';
import { rateLimited, setRateLimitHeaders } from '../edge/rate-limit-reply.js';
import { scopesOfRole } from '../modules/sessions/roles.js';
import { csrfTokenOf, findSession, sameToken } from '../modules/sessions/sessions.store.js';
import { limitByAddress } from './address-limit.js';
import { routeOf } from './route-of.js';
import { clearCookie, readCookie, SESSION_COOKIE } from './session-cookie.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether a call authenticates with its session cookie: a /v1 call without a bearer token. */
export function wantsSession(request: FastifyRequest): boolean {
  if (request.headers.authorization !== undefined) return false;
  if (!(routeOf(request).url ?? '').startsWith('/v1/')) return false;
  return readCookie(request, SESSION_COOKIE) !== undefined;
}

export async function authenticateSession(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  const secret = readCookie(request, SESSION_COOKIE) ?? '';
  const session = await findSession(ctx.db, secret, ctx.clock.now());
  if (!session) {
    clearCookie(request, reply, SESSION_COOKIE);
    // A cookie of no session identifies nobody: counted against the address like any call
    // without a credential, or any cookie would lift the anonymous limit.
    await limitByAddress(request, reply);
    throw unauthenticated('the console session ended (signed out, expired, or the user changed); sign in again');
  }
  request.networkId = session.networkId;
  const csrfToken = csrfTokenOf(secret);
  request.principal = {
    networkId: session.networkId,
    keyId: null,
    keyName: session.loginName,
    scopes: scopesOfRole(session.role),
    // Keys a person creates are bounded by the ordinary key lifetime, not by their session.
    expiresAt: Number.MAX_SAFE_INTEGER,
    user: {
      id: session.userId,
      loginName: session.loginName,
      role: session.role,
      csrfToken,
      sessionExpiresAt: session.expiresAt,
    },
  };
  // Refused after the person is known, so the audit entry of a refused call names them: a
  // request forged against someone's session is found under their name.
  if (!SAFE_METHODS.has(request.method)) {
    const sent = request.headers['x-csrf-token'];
    if (typeof sent !== 'string' || !sameToken(sent, csrfToken)) {
      throw new ApiError('csrf_failed', 'a console session must send its CSRF token in X-CSRF-Token (see GET /v1/me)');
    }
  }
  const decision = await ctx.limiter.hit(`user:${session.userId}`, ctx.settings.sessionRateLimit);
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) throw rateLimited(decision, `user ${session.loginName}`);
}

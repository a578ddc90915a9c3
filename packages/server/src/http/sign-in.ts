/**
 * The end of every sign-in (single sign-on or a one-time link): a session for the user, its
 * cookie, and an audit entry `session.create` naming the person. The CSRF token goes back in
 * `X-CSRF-Token` (and `GET /v1/me` repeats it), never in a cookie a script could be tricked into
 * sending by itself.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../core/actor.js';
import { unitOfWork } from '../core/unit-of-work.js';
import { callOf } from '../edge/actor.js';
import {
  type OpenedSession,
  openSession,
  SESSION_LIFETIME_MS,
  type SigningInUser,
  sweepSessions,
} from '../modules/sessions/sessions.store.js';
import { SESSION_COOKIE, setCookie } from './session-cookie.js';

/** The person as the actor of their own requests (and of signing in). */
export function userActor(request: FastifyRequest, user: SigningInUser, status: number): Actor {
  return { ...callOf(request, status), networkId: user.networkId, type: 'user', id: user.id, name: user.loginName };
}

export async function startSession(
  request: FastifyRequest,
  reply: FastifyReply,
  user: SigningInUser,
  method: 'sso' | 'link',
  status: number,
): Promise<OpenedSession> {
  const { ctx } = request.server;
  request.networkId = user.networkId;
  const session = await unitOfWork(ctx, userActor(request, user, status), 'session.create', async (trx, now) => {
    // Sign-ins are rare next to calls: the moment to drop sessions nobody can use any more.
    await sweepSessions(trx, now);
    const opened = await openSession(trx, { networkId: user.networkId, userId: user.id, role: user.role, method, now });
    return { value: opened, target: user.id };
  });
  setCookie(request, reply, SESSION_COOKIE, session.secret, { maxAgeSeconds: SESSION_LIFETIME_MS / 1000 });
  reply.header('X-CSRF-Token', session.csrfToken);
  return session;
}

/**
 * A sign-in a person cannot finish (a one-time link, single sign-on) is told to them as a page,
 * not a JSON body: a browser navigating there is sent to the console's sign-in page with
 * `?problem=`, one of these fixed names, which that page says in words (console SignIn.tsx).
 * Only the name travels, so no text of the refusal (or of whoever made the URL) lands on the
 * page. Scripts, which do not ask for HTML first, get the problem as before.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';

export type SignInProblem =
  | 'link_invalid'
  | 'sso_required'
  | 'user_inactive'
  /** No network of that name has single sign-on (or several share the name). */
  | 'sso_network'
  /** The sign-in expired, was used already, was started elsewhere, or single sign-on was turned off. */
  | 'sso_restart'
  /** The identity provider failed or refused (unreachable, bad token, unverified email). */
  | 'sso_failed'
  /** The provider signed the person in, but the network has no place for them. */
  | 'sso_denied'
  /** Their user in the network is suspended. */
  | 'sso_inactive';

/** A browser navigating (it asks for HTML first), not a script that reads problem details. */
export function wantsPage(request: FastifyRequest): boolean {
  return (request.headers.accept ?? '').includes('text/html');
}

/**
 * For a browser, the sign-in page naming `problem`; anything else (or an error that is no
 * refusal, a fault of the server's) is thrown on to the error handler as before.
 */
export function signInProblemPage(
  request: FastifyRequest,
  reply: FastifyReply,
  error: unknown,
  problem: SignInProblem,
): FastifyReply {
  if (!(error instanceof ApiError) || !wantsPage(request)) throw error;
  return reply.redirect(`/signin?problem=${problem}`, 303);
}

/**
 * Errors as Tailscale's API v2 answers them: `{ message, data?, status }`, where `data` lists
 * per-user problems as `{ user, errors: [string] }`. Tailscale's clients read only those three
 * fields; Warren's stable `code` and the `requestId` are added beside them. Policy problems
 * carry their line and column in each message.
 */
import type { PolicyProblem, ValidationResultBody } from '@warren/contract';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toApiError } from '../../edge/to-api-error.js';
import { noRouteError } from '../error-handler.js';
import type { ApiError } from '../problem.js';

const located = (e: PolicyProblem) => `line ${e.line}, column ${e.column}: ${e.msg}`;

/** Policy problems as Tailscale's `data`: one entry, each problem with where it is. */
function policyErrorData(errors: readonly PolicyProblem[]) {
  return [{ user: '', errors: errors.map(located) }];
}

/**
 * A refused policy's `message`, as Tailscale words it: the (first) problem with its line and
 * column, `line L, column C: …`, which Tailscale's gitops-pusher turns into an annotation on
 * that line of the file; the rest are in `data`.
 */
function policyErrorMessage(errors: readonly PolicyProblem[]): string {
  const [first, ...rest] = errors;
  if (!first) return 'the policy is not valid';
  return rest.length === 0 ? located(first) : `${located(first)} (and ${rest.length} more in data)`;
}

/**
 * A policy's problems as Tailscale reports them: each failing test's problems under its `src`
 * (as `user`), the rest under `""`, first. The message is the first of the rest, located (see
 * policyErrorMessage), or Tailscale's "test(s) failed" when only tests failed. `located: false`
 * leaves lines and columns out, for tests run on a text the caller did not write.
 */
export function policyProblems(result: Pick<ValidationResultBody, 'errors' | 'tests'>, locate = true) {
  const failing = result.tests.filter((test) => !test.passed);
  const ofTests = failing.flatMap((test) => test.failures);
  const others = result.errors.filter((e) => !ofTests.some((f) => samePlace(f, e)));
  const say = locate ? located : (e: PolicyProblem) => e.msg;
  const data = failing.map((test) => ({ user: test.src, errors: test.failures.map(say) }));
  if (others.length > 0) data.unshift({ user: '', errors: others.map(say) });
  const message = others.length === 0 ? 'test(s) failed' : locate ? policyErrorMessage(others) : say(others[0]!);
  return { message, data };
}

const samePlace = (a: PolicyProblem, b: PolicyProblem) => a.line === b.line && a.column === b.column && a.msg === b.msg;

export function tailscaleErrorBody(request: Pick<FastifyRequest, 'id'>, error: ApiError) {
  return {
    message: error.extras.errors ? policyErrorMessage(error.extras.errors) : error.detail,
    ...(error.extras.errors ? { data: policyErrorData(error.extras.errors) } : {}),
    status: error.status,
    code: error.code,
    requestId: request.id,
  };
}

/** Where Tailscale's API is served (app.ts). */
export const TAILSCALE_API_PREFIX = '/api/v2';

/**
 * Whether a request target (origin- or absolute-form) is under /api/v2. Refusals made before a
 * route is matched (the router's, Node's parser's) read it to answer in Tailscale's error body
 * there too: Tailscale's clients read `message` and nothing of /v1's problem details.
 */
export function isTailscaleApiTarget(target: string): boolean {
  const path = target.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i, '');
  if (!path.startsWith(TAILSCALE_API_PREFIX)) return false;
  const next = path.charAt(TAILSCALE_API_PREFIX.length);
  return next === '' || next === '/' || next === '?';
}

export function sendTailscaleError(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply
    .code(error.status)
    .type('application/json; charset=utf-8')
    .send(JSON.stringify(tailscaleErrorBody(request, error)));
}

/** Every error under /api/v2 — the pipeline's 401, 403 and 429 included — and every unknown path. */
export function registerTailscaleErrors(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'internal') request.log.error({ err: error }, 'unhandled error');
    return sendTailscaleError(request, reply, apiError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendTailscaleError(request, reply, noRouteError(app, request.method, request.url)),
  );
}

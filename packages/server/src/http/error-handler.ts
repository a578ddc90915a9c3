/**
 * Every non-2xx response is an RFC 9457 problem with a stable `code` — including errors
 * raised by Fastify itself (unknown route, malformed JSON, body too large, validation).
 * Unexpected errors are logged with their stack and answered with a bare 500.
 */
import { STATUS_TITLES } from '@warren/contract';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toApiError } from '../edge/to-api-error.js';
import { ApiError } from './problem.js';

export function problemBody(request: Pick<FastifyRequest, 'id'>, error: ApiError) {
  return {
    type: 'about:blank',
    title: STATUS_TITLES[error.status] ?? 'Error',
    status: error.status,
    code: error.code,
    detail: error.detail,
    requestId: request.id,
    ...error.extras,
  };
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError) {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.code(error.status).type('application/problem+json').send(problemBody(request, error));
}

/**
 * The decoded path the router matched against, for `Allow`: without the query, without the
 * scheme and host of an absolute-form target, with `%2F` kept as data (as the router does).
 */
export function routerPath(target: string): string | undefined {
  let path = target.split('?')[0] ?? '';
  if (!path.startsWith('/')) path = path.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '') || '/';
  try {
    return decodeURIComponent(path.replace(/%2f/gi, '%252F'));
  } catch {
    return undefined;
  }
}

/** 405 with `Allow` when the path is served under other methods, else 404. */
export function noRouteError(app: FastifyInstance, method: string, target: string): ApiError {
  const path = routerPath(target);
  const methods = path === undefined ? [] : app.routeTable.methodsAt(path);
  const shown = target.split('?')[0] ?? target;
  if (methods.length > 0 && !methods.includes(method)) {
    return new ApiError(
      'method_not_allowed',
      `${shown} does not accept ${method}; it accepts ${methods.join(', ')}`,
      {},
      { Allow: methods.join(', ') },
    );
  }
  return new ApiError('not_found', `no route for ${method} ${shown}`);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error);
    if (apiError.code === 'internal') request.log.error({ err: error }, 'unhandled error');
    return sendProblem(request, reply, apiError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, noRouteError(app, request.method, request.url)),
  );
}

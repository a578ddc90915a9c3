/**
 * Every non-2xx response is an RFC 9457 problem with a stable `code` — including errors
 * raised by Fastify itself (unknown route, malformed JSON, body too large, validation).
 * Unexpected errors are logged with their stack and answered with a bare 500.
 */
import { STATUS_TITLES } from '@warren/contract';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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

/** Maps a Fastify/Ajv error onto the API's problem codes. */
export function toApiError(error: FastifyError): ApiError {
  if (error instanceof ApiError) return error;
  if (error.validation) {
    const where = error.validationContext ?? 'request';
    const unknown = error.validation.find((v) => v.keyword === 'additionalProperties');
    if (unknown) {
      const field = String((unknown.params as { additionalProperty?: string }).additionalProperty);
      const path = unknown.instancePath ? `${unknown.instancePath.slice(1).replaceAll('/', '.')}.` : '';
      return new ApiError('unknown_field', `unknown field "${path}${field}" in ${where}`);
    }
    const first = error.validation[0];
    const path = first?.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : '';
    const subject = path ? `${where} field "${path}"` : where;
    // A union of literals fails once per literal ("must be equal to constant"): name them all.
    const allowed = error.validation
      .filter((v) => v.keyword === 'const' && v.instancePath === first?.instancePath)
      .map((v) => JSON.stringify((v.params as { allowedValue?: unknown }).allowedValue));
    if (allowed.length > 0) return new ApiError('invalid_request', `${subject} must be one of ${allowed.join(', ')}`);
    return new ApiError('invalid_request', `${subject} ${first?.message ?? 'is invalid'}`);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('payload_too_large', 'the request body is larger than 1 MiB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'send the body as application/json');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('invalid_request', 'the body is empty but Content-Type says JSON');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('invalid_request', 'Content-Length does not match the body');
  }
  if (error instanceof SyntaxError || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
    return new ApiError('invalid_request', `the body is not valid JSON: ${error.message}`);
  }
  if (error.statusCode === 413) return new ApiError('payload_too_large', 'the request body is larger than 1 MiB');
  if (error.statusCode === 415) return new ApiError('unsupported_media_type', 'send the body as application/json');
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new ApiError('invalid_request', error.message);
  }
  return new ApiError('internal', 'an internal error occurred; quote the requestId when reporting it');
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

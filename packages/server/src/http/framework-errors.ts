/**
 * Refusals Fastify makes before any route is matched: a path that is not valid
 * percent-encoding (400) and a path parameter over MAX_PARAM_LENGTH (414). No hook runs for
 * them, so this handler does the pipeline's work itself: the request id, the caller's key
 * when it has a valid one (so the entry lands in its network's audit log and counts against
 * its rate limit), the problem response (Tailscale's error body under /api/v2) and the audit entry.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { auditRow } from './audit.js';
import { sendProblem } from './error-handler.js';
import { authenticateCall } from './pipeline.js';
import { ApiError } from './problem.js';
import { checkRequestLine } from './request-line.js';
import { isTailscaleApiTarget, sendTailscaleError } from './tailscale-api/errors.js';

/** Longest path parameter (an id, a version) the router accepts; longer is 414. */
export const MAX_PARAM_LENGTH = 200;

function requestLineProblem(request: FastifyRequest): ApiError | undefined {
  try {
    checkRequestLine(request);
    return undefined;
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

function frameworkProblem(error: FastifyError): ApiError {
  switch (error.code) {
    case 'FST_ERR_BAD_URL':
      return new ApiError('invalid_request', 'the path is not valid percent-encoding (RFC 3986)');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('uri_too_long', `a path segment is longer than ${MAX_PARAM_LENGTH} characters`);
    default:
      return new ApiError('internal', 'an internal error occurred; quote the requestId when reporting it');
  }
}

async function answer(error: FastifyError, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  reply.header('X-Request-Id', request.id);
  // The router also refuses targets the request line check would (an absolute-form URL with a
  // bad authority): that check's answer says what is wrong.
  let problem = requestLineProblem(request) ?? frameworkProblem(error);
  if (problem.code === 'internal') request.log.error({ err: error }, 'router error');
  try {
    await authenticateCall(request, reply);
  } catch (refusal) {
    // The request is malformed whoever sends it, so a missing key does not change the
    // answer; an exhausted rate limit does, as for every call.
    if (refusal instanceof ApiError && refusal.code === 'rate_limited') problem = refusal;
  }
  // Under /api/v2, in Tailscale's error body, as every other refusal there.
  await (isTailscaleApiTarget(request.url) ? sendTailscaleError : sendProblem)(request, reply, problem);
  ctx.audit.enqueue(auditRow(request, problem.status, ctx.clock.now()));
}

export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  answer(error, request, reply).catch((failure: unknown) => {
    request.log.error({ err: failure }, 'could not answer a router error');
    if (!reply.sent) reply.raw.destroy();
  });
}

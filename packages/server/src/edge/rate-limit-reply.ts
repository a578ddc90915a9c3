/**
 * How a rate-limit decision shows in a reply: the RateLimit-* headers on every counted call,
 * and the 429 problem (with Retry-After) when it was refused. Shared by every authenticator
 * (API keys, console sessions, devices, auth keys, anonymous sign-in calls).
 */
import type { FastifyReply } from 'fastify';
import type { RateLimitDecision } from '../core/context.js';
import { ApiError } from '../core/errors.js';

export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision): void {
  reply.header('RateLimit-Limit', decision.limit);
  reply.header('RateLimit-Remaining', decision.remaining);
  reply.header('RateLimit-Reset', decision.resetSeconds);
  if (!decision.allowed) reply.header('Retry-After', decision.resetSeconds);
}

export function rateLimited(decision: RateLimitDecision, who: string): ApiError {
  return new ApiError(
    'rate_limited',
    `${who} made more than ${decision.limit} requests in the last minute; retry after ${decision.resetSeconds} s`,
    {},
    { 'Retry-After': String(decision.resetSeconds) },
  );
}

/** Sign-in endpoints take no key: they are limited per client address, like any anonymous call. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { clientAddress } from '../edge/client-address.js';
import { rateLimited, setRateLimitHeaders } from '../edge/rate-limit-reply.js';

export async function limitByAddress(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { ctx } = request.server;
  const decision = await ctx.limiter.hit(`addr:${clientAddress(request)}`, ctx.settings.anonymousRateLimit);
  setRateLimitHeaders(reply, decision);
  if (!decision.allowed) throw rateLimited(decision, `client ${clientAddress(request)}`);
}

/**
 * The address a browser reaches Warren at: the operator's `publicUrl`, else the scheme and
 * host of the request (behind a proxy, Fastify's trustProxy decides whether its headers count).
 */
import type { FastifyRequest } from 'fastify';

export function publicBase(request: FastifyRequest): string {
  const configured = request.server.ctx.settings.publicUrl;
  if (configured) return configured.replace(/\/+$/, '');
  return `${request.protocol}://${request.host}`;
}

export const callbackUrl = (request: FastifyRequest): string => `${publicBase(request)}/auth/callback`;

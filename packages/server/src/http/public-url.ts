/**
 * The address browsers and identity providers reach Warren at: the operator's public URL
 * (WARREN_PUBLIC_URL), never the request's Host. Built from Host, the redirect URI handed to an
 * identity provider and SCIM's `meta.location` followed whatever a caller wrote there, so one
 * crafted request could plant an attacker's host in them. Single sign-on and SCIM need absolute
 * URLs, so without a public URL they refuse to work and say how to set one.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError } from './problem.js';

export const publicUrlRequired = (what: string) =>
  new ApiError(
    'unavailable',
    `${what} needs the server's public URL, and none is configured: start warren serve with WARREN_PUBLIC_URL set to the address browsers reach it at (e.g. WARREN_PUBLIC_URL=https://warren.example.com)`,
  );

export function publicBase(request: FastifyRequest, what: string): string {
  const configured = request.server.ctx.settings.publicUrl;
  if (!configured) throw publicUrlRequired(what);
  return configured.replace(/\/+$/, '');
}

export const callbackUrl = (request: FastifyRequest): string =>
  `${publicBase(request, 'single sign-on')}/auth/callback`;

/**
 * The single sign-on redirect URI to show before anything is set up, or null while no public
 * URL is configured (GET /v1/network must answer either way).
 */
export function redirectUriIfKnown(request: FastifyRequest): string | null {
  return request.server.ctx.settings.publicUrl ? callbackUrl(request) : null;
}

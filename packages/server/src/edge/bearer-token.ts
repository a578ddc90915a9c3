/** The credential of a call: every face (API keys, sessions' absence of one, devices) reads it alike. */
import type { FastifyRequest } from 'fastify';

/**
 * The token of `Authorization: Bearer <token>`, or of `Basic base64(<token>:)` — the spelling
 * Tailscale's API clients send an API key in, accepted everywhere so that one key works the
 * same on /v1 and /api/v2 — or undefined.
 */
export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (!header) return undefined;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return bearer[1];
  const basic = /^Basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header);
  if (!basic?.[1]) return undefined;
  // The key is the user name; the password is empty (as Tailscale's clients send it).
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon > 0 && colon === decoded.length - 1 ? decoded.slice(0, colon) : undefined;
}

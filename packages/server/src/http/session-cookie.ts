/**
 * The cookies of the console: the session's secret (HttpOnly, so scripts never see it) and,
 * while a single sign-on is under way, the browser's half of its `state`. SameSite=Lax: sent
 * on the identity provider's top-level redirect back to us, never on a cross-site POST.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = 'warren_session';
export const SSO_STATE_COOKIE = 'warren_sso_state';

/** The value of one cookie of the request, or undefined. */
export function readCookie(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const value = part.slice(eq + 1).trim();
    // Our values are base64url: anything else was not set by us.
    return /^[A-Za-z0-9_-]{1,128}$/.test(value) ? value : undefined;
  }
  return undefined;
}

/**
 * `Secure` when the browser reached us over HTTPS: the request came over TLS, or the operator's
 * public URL is https. Warren usually sits behind a proxy that ends TLS and forwards plain
 * http, so the request's own protocol alone would leave the session cookie sendable in clear.
 */
export function setCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  name: string,
  value: string,
  options: { maxAgeSeconds: number; path?: string },
): void {
  const attributes = [
    `${name}=${value}`,
    `Path=${options.path ?? '/'}`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  const publicUrl = request.server.ctx.settings.publicUrl;
  if (request.protocol === 'https' || publicUrl?.startsWith('https:')) attributes.push('Secure');
  const previous = reply.getHeader('set-cookie');
  const cookies = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
  reply.header('set-cookie', [...cookies, attributes.join('; ')]);
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply, name: string, path = '/'): void {
  setCookie(request, reply, name, '', { maxAgeSeconds: 0, path });
}

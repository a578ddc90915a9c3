/**
 * The request line as RFC 9112 asks a server to judge it, for what Node's parser lets through:
 *  - the version (§2.3): the parser reads `HTTP/2.0` and a line without a version (HTTP/0.9)
 *    with HTTP/1 framing; answered 505, since only HTTP/1.0 and 1.1 are spoken here;
 *  - the target's length (§3): over MAX_TARGET_LENGTH is 414 (the RFC asks servers to take at
 *    least 8,000 octets; longer than the header limit is answered by http/client-error.ts);
 *  - the target's form (§3.2): origin-form for every method, asterisk-form only for OPTIONS,
 *    absolute-form only with an `http`/`https` scheme and an authority that is `host[:port]`
 *    without userinfo (RFC 9110 §4.2.4 asks recipients to treat userinfo as an error), and
 *    never a fragment; authority-form is CONNECT's, and Warren is no proxy (501);
 *  - a NUL (`%00`) anywhere in the target: 400.
 * An absolute-form target's authority is then ignored as the Host header would be: nothing
 * here builds a URL from either (absolute URLs come from the configured public URL).
 */
import type { FastifyRequest } from 'fastify';
import { isHostAndPort } from './host-header.js';
import { ApiError, invalidRequest } from './problem.js';

/** Longest request target read; RFC 9112 §3 asks for at least 8,000 octets. */
export const MAX_TARGET_LENGTH = 8192;

/** The methods some route implements, for `OPTIONS *` (which asks about the server itself). */
export const SERVER_METHODS = 'GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS';

export const versionNotSupported = (version: string) =>
  new ApiError(
    'http_version_not_supported',
    `HTTP/${version} is not served here: send HTTP/1.1 (or HTTP/1.0)`,
    {},
    { Connection: 'close' },
  );

export const targetTooLong = () =>
  new ApiError('uri_too_long', `the request target is longer than ${MAX_TARGET_LENGTH} characters`);

const ABSOLUTE = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?]*)/;

/** Throws the problem of a request line the server does not accept. */
export function checkRequestLine(request: Pick<FastifyRequest, 'raw'>): void {
  const { raw } = request;
  if (raw.httpVersionMajor !== 1) throw versionNotSupported(raw.httpVersion);
  const target = raw.url ?? '';
  if (target.length > MAX_TARGET_LENGTH) throw targetTooLong();
  if (target.includes('#')) throw invalidRequest('the request target carries a fragment (#…), which is never sent');
  // No id, name or filter holds a NUL, and PostgreSQL cannot even compare text with one (it
  // answered a 500): refused here, once, for every route.
  if (target.includes('%00'))
    throw invalidRequest('the request target holds %00 (a NUL character), which no value takes');
  if (target.startsWith('/')) return;
  if (target === '*') {
    if (raw.method === 'OPTIONS') return;
    throw invalidRequest(`the request target * is only for OPTIONS, not ${raw.method}`);
  }
  const absolute = ABSOLUTE.exec(target);
  if (!absolute) {
    if (raw.method === 'CONNECT') {
      throw new ApiError(
        'not_implemented',
        'CONNECT is not served: Warren is not a proxy',
        {},
        { Connection: 'close' },
      );
    }
    throw invalidRequest('the request target is neither a path nor an absolute http URL');
  }
  const [, scheme, authority] = absolute as unknown as [string, string, string];
  const lower = scheme.toLowerCase();
  if (lower !== 'http' && lower !== 'https') {
    throw invalidRequest(`the request target's scheme is ${scheme}: only http and https URLs are served`);
  }
  if (authority.includes('@')) throw invalidRequest('the request target carries userinfo (user@host), refused');
  if (authority === '' || !isHostAndPort(authority)) {
    throw invalidRequest(`the request target's authority ${JSON.stringify(authority)} is not a host and optional port`);
  }
}

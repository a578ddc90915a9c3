/**
 * The Host header as RFC 9112 §3.2 asks a server to judge it: an HTTP/1.1 request with no
 * Host, with more than one, or with one that is not `host[:port]` is answered 400. Node's own
 * check answered a missing Host with an empty 400 (no problem body, no request id) and let the
 * others through with the first Host winning, so `Host: evil.example/path` or a second Host
 * reached the handlers. Nothing in Warren builds a URL from Host any more (absolute URLs come
 * from the configured public URL, modules/sso/public-url.ts); refusing malformed ones keeps
 * logs, proxies and caches from disagreeing about which host a request was for.
 */
import { isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { invalidRequest } from './problem.js';

// uri-host [ ":" port ] (RFC 3986 §3.2.2–3.2.3): an IP literal in brackets, or a reg-name
// (unreserved, sub-delims and percent-encoded octets, so an IPv4 address too); an empty host
// is valid (a target without an authority).
const AUTHORITY = /^(?:\[([^\]]*)\]|(?:[A-Za-z0-9\-._~!$&'()*+,;=]|%[0-9A-Fa-f]{2})*)(?::([0-9]*))?$/;
// IPvFuture: "v" version "." then unreserved, sub-delims or ":".
const IP_FUTURE = /^v[0-9A-Fa-f]+\.[A-Za-z0-9\-._~!$&'()*+,;=:]+$/;

/**
 * Whether `text` is `host[:port]`: the value of a Host header, or the authority of an
 * absolute-form target. A bracketed literal must be an IPv6 address (a zone `%25…` allowed,
 * RFC 6874) or an IPvFuture, and a port at most 65535.
 */
export function isHostAndPort(text: string): boolean {
  const match = AUTHORITY.exec(text);
  if (!match) return false;
  const [, literal, port] = match;
  if (literal !== undefined) {
    const address = literal.replace(/%25[A-Za-z0-9\-._~]+$/, '');
    if (!isIPv6(address) && !IP_FUTURE.test(literal)) return false;
  }
  return port === undefined || port === '' || Number(port) <= 65535;
}

export function checkHostHeader(request: FastifyRequest): void {
  const raw = request.raw.rawHeaders;
  const values: string[] = [];
  // Only a four-letter name can be Host: the others are not lower-cased (a string per header).
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === 4 && raw[i].toLowerCase() === 'host') values.push(raw[i + 1]);
  }
  if (values.length > 1) {
    throw invalidRequest(`the request has ${values.length} Host headers: send exactly one (RFC 9112 §3.2)`);
  }
  if (values.length === 0) {
    // HTTP/1.0 predates Host; every later version requires it.
    if (request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor === 0) return;
    throw invalidRequest('the request has no Host header: HTTP/1.1 requires one (RFC 9112 §3.2)');
  }
  if (!isHostAndPort(values[0])) {
    throw invalidRequest(
      `the Host header ${JSON.stringify(values[0])} is not a host and optional port (RFC 9112 §3.2)`,
    );
  }
}

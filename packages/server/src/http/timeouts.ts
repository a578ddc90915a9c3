/**
 * How long a connection may take to send a request, and stay idle between requests. Fastify
 * turns Node's request timeout off by default, so a client that sent its headers with
 * `Content-Length: 1000` and then nothing held its connection (and a file descriptor) for as long
 * as it liked: a few thousand such clients exhaust the server without sending a byte more.
 *
 * The limits only count while a request is being received, never while it is being answered
 * (a slow netmap, a long export) or after an upgrade (the DERP relay has its own keep-alives):
 *
 * - headers: 10 s from the connection (or the previous response) to the end of the headers.
 *   An honest client sends them in one write; 10 s is what Go servers commonly allow.
 * - request: 30 s for the whole request, body included: a 1 MiB policy at 35 KB/s.
 * - keep-alive: 72 s idle between requests on a kept connection (Fastify's default; above the
 *   60 s idle timeout of common load balancers, so the balancer closes first, never us).
 * - check interval: how often Node looks for connections past a limit (its default, 30 s,
 *   let a stalled connection live up to 30 s past its limit).
 *
 * A request past its limit is answered 408 `request_timeout` (http/client-error.ts).
 */
import type { FastifyServerOptions } from 'fastify';

export interface HttpTimeouts {
  headersMs: number;
  requestMs: number;
  keepAliveMs: number;
  checkIntervalMs: number;
}

export const DEFAULT_HTTP_TIMEOUTS: HttpTimeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 72_000,
  checkIntervalMs: 1_000,
};

/** The Fastify and node:http server options that apply the limits. */
export function timeoutOptions(overrides: Partial<HttpTimeouts> = {}): Pick<
  FastifyServerOptions,
  'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout'
> & {
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
} {
  const t = { ...DEFAULT_HTTP_TIMEOUTS, ...overrides };
  return {
    requestTimeout: t.requestMs,
    keepAliveTimeout: t.keepAliveMs,
    // No socket inactivity timeout: it would also cut long polls and streams being answered.
    connectionTimeout: 0,
    http: {
      // Node refuses a headers timeout above the request timeout.
      headersTimeout: Math.min(t.headersMs, t.requestMs),
      requestTimeout: t.requestMs,
      connectionsCheckingInterval: t.checkIntervalMs,
    },
  };
}

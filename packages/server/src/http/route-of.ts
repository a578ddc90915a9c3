/**
 * The options of the route a request matched, read from Fastify once per request. Fastify's
 * `request.routeOptions` is a getter that builds a new twelve-field object on every read (and
 * asks the router whether a version constraint exists), and the pipeline reads the route's
 * config and URL six to eight times in every call: the authentication mode, the scope, the
 * own-device check, the guard before the handler, the audit exemption.
 */
import type { FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyRequest {
    /** `routeOptions` as first read (routeOf); null until then. */
    matchedRoute: FastifyRequest['routeOptions'] | null;
  }
}

export function routeOf(request: FastifyRequest): FastifyRequest['routeOptions'] {
  // `??=`: requests Fastify builds for errors found before routing lack the decoration.
  request.matchedRoute ??= request.routeOptions;
  return request.matchedRoute;
}

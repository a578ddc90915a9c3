/**
 * Every route the app serves, recorded as it is registered: the authentication tests walk
 * it (so a new route is covered without anyone adding it to a list), and a path served
 * under other methods answers 405 with `Allow` instead of 404.
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { AuthMode } from '../edge/request-principals.js';

export interface RouteEntry {
  method: string;
  /** The registered pattern, e.g. `/v1/devices/:id`. */
  url: string;
  auth: AuthMode;
}

/**
 * Who may call a route, from its config alone. Anything but the two explicit exemptions is
 * an API route: a route that forgets its config, or misspells it, needs an API key.
 */
export function authModeOf(config: { auth?: unknown } | undefined): AuthMode {
  const auth = config?.auth;
  return auth === 'none' || auth === 'node' ? auth : 'api';
}

/** `/v1/devices/:id` → a pattern matching one concrete, already decoded path. */
function matcher(url: string): RegExp {
  const escaped = url
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return new RegExp(`^${escaped}/?$`);
}

export class RouteTable {
  readonly routes: RouteEntry[] = [];
  private readonly patterns: { method: string; pattern: RegExp }[] = [];

  add(route: RouteOptions): void {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      this.routes.push({ method, url: route.url, auth: authModeOf(route.config) });
      this.patterns.push({ method, pattern: matcher(route.url) });
    }
  }

  /** The methods served at a decoded path, in registration order (empty: no such path). */
  methodsAt(path: string): string[] {
    const methods = this.patterns.filter((p) => p.pattern.test(path)).map((p) => p.method);
    return [...new Set(methods)];
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    routeTable: RouteTable;
  }
}

/** Call before any route is registered: only routes registered afterwards are seen. */
export function registerRouteTable(app: FastifyInstance): void {
  const table = new RouteTable();
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => table.add(route));
}

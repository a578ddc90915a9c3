/**
 * Authentication is decided by the route the router matched, never by how the URL is
 * spelled. Every route of the app (read from the app itself) is called under spellings that
 * the router decodes or normalises differently from a prefix check on the raw URL.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_DIR, CONSOLE_PAGES } from '../../src/http/console.js';
import { json, startServer, type TestServer } from '../harness.js';
import { type RawResponse, rawRequest } from './raw-http.js';

/** A concrete path for a route pattern: every `:param` becomes a value of the right shape. */
function concrete(url: string): string {
  return url.replace(/:version/g, '1').replace(/:[A-Za-z]+/g, 'x_unknown');
}

/** The same request line, spelled as clients, proxies and attackers spell it. */
function spellings(path: string): [string, string][] {
  const rest = path.slice(1); // without the leading slash
  const variants: [string, string][] = [
    ['trailing slash', `${path}/`],
    ['absolute form', `http://x${path}`],
    ['absolute form, https and a port', `https://warren.example:8443${path}`],
    ['double slash', `/${path}`],
    ['dot segment', path.replace(/^\/([^/]+)\//, '/$1/./')],
    ['upper case', path.toUpperCase()],
    [
      'encoded last letter',
      path.replace(/([a-z])([^a-z]*)$/, (_m, c: string, tail: string) => `%${c.charCodeAt(0).toString(16)}${tail}`),
    ],
    ['encoded slash', path.replace(/(.)\/(?=[^/]*$)/, '$1%2F')],
    ['semicolon', `${path};x`],
  ];
  if (path.startsWith('/v1/')) {
    const tail = path.slice(3);
    variants.push(
      ['encoded letter', `/%761${tail}`],
      ['encoded upper-case hex', `/%761${tail}`.replace('%76', '%76'.toUpperCase())],
      ['encoded digit', `/v%31${tail}`],
      ['encoded letter and digit', `/%76%31${tail}`],
      ['double encoding', `/%25761${tail}`],
      ['encoded letter, absolute form', `http://x/%761${tail}`],
    );
  } else if (rest) {
    variants.push(['encoded first letter', `/%${rest.charCodeAt(0).toString(16)}${rest.slice(1)}`]);
  }
  return variants;
}

/**
 * What a public route answers without a key or query: sign-in routes refuse an empty call; the
 * console's pages answer index.html (503 when the console is not built) and `/assets/*`, taken
 * literally, names no asset.
 */
const PUBLIC_ANSWER: Record<string, number> = {
  '/auth/login': 400,
  '/auth/callback': 401,
  '/auth/link': 400,
  '/auth/logout': 204,
  // OAuth's client-credentials grant: its credentials are the client's, not an API key.
  '/api/v2/oauth/token': 401,
  // A machine's login URL: a console session approves it, so without one the answer is 401.
  '/auth/register/:token': 401,
  '/auth/register/:token/approve': 401,
  // A Tailscale SSH check URL: only a console session (the source device's owner) confirms it.
  '/auth/ssh-check/:token': 401,
  '/auth/ssh-check/:token/approve': 401,
  // A Tailscale client's flow-log upload: the log id in the path is its credential, and a path
  // whose id is not a logtail private id (as the canonical `:id` here) is a bad request.
  '/c/:collection/:id': 400,
  // Tailscale's control protocol without its upgrade: a bad request, as Tailscale's server has it.
  '/ts2021': 400,
  '/assets/*': 404,
  ...Object.fromEntries(CONSOLE_PAGES.map((page) => [page, existsSync(join(CONSOLE_DIR, 'index.html')) ? 200 : 503])),
};

/** The console's routes: its pages, its hashed assets and the files at the top of its build. */
const isConsoleRoute = (url: string) =>
  CONSOLE_PAGES.includes(url) || url === '/assets/*' || /^\/[\w-]+\.\w+$/.test(url);

// SCIM answers its refusals in its own error schema (application/scim+json), not as problems.
/** A refusal in one of the server's error shapes: a problem, SCIM's, or Tailscale's (/api/v2). */
const isProblem = (res: RawResponse) =>
  /^application\/(problem|scim)\+json/.test(String(res.headers['content-type'])) || isTailscaleError(res);
const isTailscaleError = (res: RawResponse) => {
  if (!String(res.headers['content-type']).startsWith('application/json')) return false;
  if (res.body === '') return true; // an answer to HEAD: the type is all there is
  const body = JSON.parse(res.body) as { message?: unknown; status?: unknown };
  return typeof body.message === 'string' && body.status === res.status;
};

describe('authentication whatever the spelling of the path', () => {
  let server: TestServer;
  let routes: { method: string; url: string; auth: string }[];
  const canonical = new Map<string, { withoutKey: number; withKey: number }>();

  beforeAll(async () => {
    // Hundreds of keyless calls: the per-address limit is checked on its own below.
    server = await startServer({ settings: { anonymousRateLimit: 1_000_000 } });
    routes = server.app.routeTable.routes;
    const bearer = { authorization: `Bearer ${server.apiKey}` };
    for (const route of routes) {
      const path = concrete(route.url);
      const withoutKey = (await rawRequest(server.url, route.method, path)).status;
      const withKey = (await rawRequest(server.url, route.method, path, bearer)).status;
      canonical.set(`${route.method} ${route.url}`, { withoutKey, withKey });
    }
  });
  afterAll(() => server.close());

  it('enumerates the routes of the app, the public ones and the node protocol included', () => {
    const names = routes.map((r) => `${r.method} ${r.url}`);
    expect(names).toEqual(expect.arrayContaining(['GET /healthz', 'GET /v1/openapi.json', 'POST /v1/acl/validate']));
    expect(names).toEqual(
      expect.arrayContaining(['POST /v1/node/register', 'DELETE /v1/keys/:id', 'HEAD /v1/devices']),
    );
    const open = routes.filter((r) => r.auth === 'none').map((r) => r.url);
    // The console's pages are public (the app signs in from them), under GET and HEAD only.
    expect(open.filter((url) => CONSOLE_PAGES.includes(url)).sort()).toEqual(
      CONSOLE_PAGES.flatMap((page) => [page, page]).sort(),
    );
    for (const route of routes.filter((r) => isConsoleRoute(r.url))) expect(['GET', 'HEAD']).toContain(route.method);
    expect(open.filter((url) => !isConsoleRoute(url)).sort()).toEqual([
      '/api/v2/oauth/token',
      '/auth/callback',
      '/auth/callback',
      '/auth/link',
      '/auth/link',
      '/auth/login',
      '/auth/login',
      '/auth/logout',
      '/auth/register/:token',
      '/auth/register/:token',
      '/auth/register/:token/approve',
      '/auth/ssh-check/:token',
      '/auth/ssh-check/:token',
      '/auth/ssh-check/:token/approve',
      '/c/:collection/:id',
      '/healthz',
      '/healthz',
      // Tailscale clients fetch the control server's Noise key before they have any credential.
      '/key',
      '/key',
      '/readyz',
      '/readyz',
      // What the control protocol's upgrade declines: a 400 saying what it lacks.
      '/ts2021',
      '/ts2021',
      '/ts2021',
      '/v1/openapi.json',
      '/v1/openapi.json',
    ]);
  });

  it('answers 401 on the canonical path of every route that is not public', () => {
    for (const route of routes) {
      const answer = canonical.get(`${route.method} ${route.url}`);
      if (route.auth === 'none') {
        expect(answer?.withoutKey, `${route.method} ${route.url}`).toBe(PUBLIC_ANSWER[route.url] ?? 200);
      } else expect(answer?.withoutKey, `${route.method} ${route.url}`).toBe(401);
    }
  });

  // Thousands of calls (every route, the console's pages included, under every spelling, with
  // and without a key): on a busy machine they need more than the default time.
  it('never lets a spelling reach a handler without a key, nor answer differently with one', {
    timeout: 60_000,
  }, async () => {
    const failures: string[] = [];
    const bearer = { authorization: `Bearer ${server.apiKey}` };
    // One route after another would take long: the routes are walked side by side.
    const walk = async (route: (typeof routes)[number]) => {
      const expected = canonical.get(`${route.method} ${route.url}`)!;
      for (const [label, path] of spellings(concrete(route.url))) {
        const what = `${route.method} ${path} (${label})`;
        const anonymous = await rawRequest(server.url, route.method, path).catch((e: Error) => {
          failures.push(`${what}: ${e.message}`);
          return undefined;
        });
        if (!anonymous) continue;
        // Without a key: 401, or — only for a public route the spelling still reaches — its answer.
        const keylessOk =
          (anonymous.status === 401 && isProblem(anonymous) && anonymous.headers['ratelimit-limit'] !== undefined) ||
          (route.auth === 'none' && anonymous.status === expected.withoutKey);
        if (!keylessOk) failures.push(`${what} without a key: ${anonymous.status}`);
        const keyed = await rawRequest(server.url, route.method, path, bearer);
        const keyedOk =
          keyed.status === expected.withKey || (keyed.status >= 400 && keyed.status < 500 && isProblem(keyed));
        if (!keyedOk) failures.push(`${what} with a key: ${keyed.status}, canonical ${expected.withKey}`);
      }
    };
    await Promise.all(routes.map(walk));
    expect(failures).toEqual([]);
  });

  it('refuses the policy validator spelled /%761/ without a key, and counts it per address', async () => {
    const limited = await startServer({ settings: { anonymousRateLimit: 2 } });
    try {
      const policy = '{"acls": []}';
      const first = await rawRequest(
        limited.url,
        'POST',
        '/%761/acl/validate',
        { 'content-type': 'application/json' },
        policy,
      );
      expect(first.status).toBe(401);
      expect(JSON.parse(first.body)).toMatchObject({ code: 'unauthenticated' });
      await rawRequest(limited.url, 'GET', '/v%31/devices');
      const third = await rawRequest(limited.url, 'GET', 'http://x/v1/network');
      expect(third.status).toBe(429);
      expect(third.headers['retry-after']).toBeDefined();
    } finally {
      await limited.close();
    }
  });

  it('serves the canonical answer to an encoded spelling with a key', async () => {
    const encoded = await rawRequest(server.url, 'GET', '/%761/network', { authorization: `Bearer ${server.apiKey}` });
    expect(encoded.status).toBe(200);
    const plain = await json(await server.call('GET', '/v1/network'));
    expect(JSON.parse(encoded.body).id).toBe(plain.id);
  });
});

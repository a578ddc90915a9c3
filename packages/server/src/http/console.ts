/**
 * The web console, served from its Vite build (packages/console/dist) on the API's origin.
 * Files are read once when the server starts: every instance serves the same bytes and holds
 * no state. Console pages answer index.html (the app routes in the browser); only the paths
 * the console owns are registered, so `/v1/*`, `/auth/*`, `/scim/*` and the probes never fall
 * back to it and an unknown path stays an API 404.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from './problem.js';

export const CONSOLE_DIR = resolve(import.meta.dirname, '..', '..', '..', 'console', 'dist');

/** The pages of the console; each answers index.html and is routed by the app. */
export const CONSOLE_PAGES = [
  '/',
  '/signin',
  '/devices',
  '/devices/:id',
  '/policy',
  '/keys',
  '/users',
  '/routes',
  '/logs',
  '/network',
  '/events',
  '/webhooks',
  // A Tailscale client's login URL (tailscale up without an auth key).
  '/register/:token',
  // A Tailscale SSH connection's check URL (an ssh rule with action "check").
  '/ssh-check/:token',
];

export interface ConsoleOptions {
  /** The console's build (default packages/console/dist). */
  dir?: string;
}

/**
 * Where index.html carries the style nonce (`<meta property="csp-nonce" nonce="…">`): the
 * console reads it there and hands it to CodeMirror, whose stylesheets are `<style>` elements.
 */
export const NONCE_PLACEHOLDER = 'WARREN_STYLE_NONCE';

/**
 * No inline script, no eval: the build emits only files, and scripts carry no nonce. Styles
 * come from the build's stylesheet or from `<style>` elements holding this response's nonce
 * (CodeMirror's); no inline style is allowed. CodeMirror and React set element styles through
 * the CSSOM (`element.style`), which a policy does not govern, never through style attributes.
 */
export function consoleCsp(styleNonce?: string): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    styleNonce ? `style-src 'self' 'nonce-${styleNonce}'` : "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Warren</title></head>
<body><main><h1>The console is not built</h1><p>Run <code>npm run build:console</code> (or <code>npm start</code>,
which builds it) and restart the server. The API at <code>/v1</code> works without it.</p></main></body></html>`;

interface Asset {
  body: Buffer;
  type: string;
}

function readAssets(dir: string): Map<string, Asset> {
  const files = new Map<string, Asset>();
  const walk = (folder: string, prefix: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path, `${prefix}${entry.name}/`);
      else
        files.set(`${prefix}${entry.name}`, {
          body: readFileSync(path),
          type: TYPES[extname(entry.name)] ?? 'application/octet-stream',
        });
    }
  };
  if (existsSync(dir)) walk(dir, '');
  return files;
}

function secure(reply: FastifyReply, styleNonce?: string): FastifyReply {
  return reply
    .header('Content-Security-Policy', consoleCsp(styleNonce))
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'same-origin')
    .header('X-Frame-Options', 'DENY')
    .header('Cross-Origin-Opener-Policy', 'same-origin');
}

/** index.html with a fresh nonce where the placeholder was: one per response, never reused. */
function indexWithNonce(index: Buffer): () => { body: string; nonce: string } {
  const parts = index.toString('utf8').split(NONCE_PLACEHOLDER);
  return () => {
    const nonce = randomBytes(16).toString('base64');
    return { body: parts.join(nonce), nonce };
  };
}

export function registerConsole(app: FastifyInstance, options: ConsoleOptions = {}): void {
  const files = readAssets(options.dir ?? CONSOLE_DIR);
  const index = files.get('index.html');
  const render = index && indexWithNonce(index.body);
  const route = { config: { auth: 'none' as const }, schema: { hide: true } };

  const page = async (request: FastifyRequest, reply: FastifyReply) => {
    request.audited = true; // a page load is not an API call
    reply.header('Cache-Control', 'no-cache').type('text/html; charset=utf-8');
    if (!render) return secure(reply).code(503).send(NOT_BUILT);
    const { body, nonce } = render();
    return secure(reply, nonce).send(body);
  };
  for (const url of CONSOLE_PAGES) app.get(url, route, page);

  app.get<{ Params: { '*': string } }>('/assets/*', route, async (request, reply) => {
    request.audited = true;
    const asset = files.get(`assets/${request.params['*']}`);
    secure(reply);
    // A problem like every other refusal (the error handler answers it).
    if (!asset) throw notFound(`the console has no asset ${request.params['*']}`);
    // Vite names every asset by its content's hash: a new build is new URLs.
    return reply.header('Cache-Control', IMMUTABLE).type(asset.type).send(asset.body);
  });

  // Files at the top of the build (favicon and the like), not hashed: revalidated.
  for (const [name, asset] of files) {
    if (name.includes('/') || name === 'index.html') continue;
    app.get(`/${name}`, route, async (request, reply) => {
      request.audited = true;
      return secure(reply).header('Cache-Control', 'no-cache').type(asset.type).send(asset.body);
    });
  }
}

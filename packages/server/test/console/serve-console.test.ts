/**
 * The console's files as buildApp serves them (so `warren serve`, main.ts and tests alike):
 * pages fall back to index.html, hashed assets are immutable, every answer carries the
 * security headers with a fresh style nonce per page, and the API's paths never fall back to
 * the console.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { freshDatabase, startServer, type TestDatabase } from '../harness.js';

describe('the console served by warren serve', () => {
  let dir: string;
  let app: FastifyInstance;
  let database: TestDatabase;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'warren-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(
      join(dir, 'index.html'),
      '<!doctype html><meta property="csp-nonce" nonce="WARREN_STYLE_NONCE"><title>console</title>',
    );
    writeFileSync(join(dir, 'assets', 'index-AbC123.js'), 'console.log(1)');
    writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
    database = await freshDatabase();
    app = await buildApp({ storage: database.storage, console: { dir } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await app.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers index.html, never cached, for every console page', async () => {
    for (const path of ['/', '/devices', '/devices/dev_123', '/policy', '/keys', '/logs?log=audit']) {
      const res = await fetch(`${url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('<title>console</title>');
    }
  });

  it('sends the security headers: CSP without inline scripts, inline styles or eval, no framing, no sniffing', async () => {
    const res = await fetch(`${url}/devices`);
    const csp = res.headers.get('content-security-policy') ?? '';
    const directives = new Map(csp.split('; ').map((d) => [d.split(' ')[0], d.split(' ').slice(1)]));
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('style-src')?.[0]).toBe("'self'");
    expect(directives.get('style-src')?.[1]).toMatch(/^'nonce-[A-Za-z0-9+/]{22}=='$/);
    expect(directives.get('style-src')).toHaveLength(2);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
  });

  it("gives every page load its own style nonce, written into index.html's meta tag and nowhere else", async () => {
    const nonces = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/policy`);
      const [, nonce] = (res.headers.get('content-security-policy') ?? '').match(/'nonce-([^']+)'/) ?? [];
      const body = await res.text();
      expect(body).toContain(`<meta property="csp-nonce" nonce="${nonce}">`);
      expect(body).not.toContain('WARREN_STYLE_NONCE');
      nonces.push(nonce);
    }
    expect(new Set(nonces).size).toBe(3);
    const asset = await fetch(`${url}/assets/index-AbC123.js`);
    expect(asset.headers.get('content-security-policy')).not.toContain('nonce-');
  });

  it('serves hashed assets as immutable with their type, and 404s an unknown one', async () => {
    const res = await fetch(`${url}/assets/index-AbC123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/javascript');
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toBe('console.log(1)');
    // A missing asset is a 404 problem like any other, with its request id.
    const missing = await fetch(`${url}/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await missing.json()) as { requestId: string };
    expect(problem).toMatchObject({ status: 404, code: 'not_found' });
    expect(missing.headers.get('x-request-id')).toBe(problem.requestId);
    expect((await fetch(`${url}/favicon.svg`)).headers.get('content-type')).toBe('image/svg+xml');
  });

  it('never falls back to the console for the API, sign-in, SCIM or probe paths', async () => {
    for (const path of ['/v1/nope', '/v1/devices', '/auth/nope', '/scim/v2/Users', '/nope']) {
      const res = await fetch(`${url}${path}`);
      expect(res.headers.get('content-type') ?? '', path).not.toContain('text/html');
      expect(res.status, path).toBeGreaterThanOrEqual(400);
    }
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
  });

  it('serves the same files from a second instance on the same database, each page with its own nonce', async () => {
    const second = await buildApp({ storage: database.storage, console: { dir } });
    try {
      const [a, b] = await Promise.all([
        app.inject({ method: 'GET', url: '/assets/index-AbC123.js' }),
        second.inject({ method: 'GET', url: '/assets/index-AbC123.js' }),
      ]);
      expect(b.body).toBe(a.body);
      expect(b.headers['cache-control']).toBe(a.headers['cache-control']);
      const pages = await Promise.all([app, second].map((x) => x.inject({ method: 'GET', url: '/devices' })));
      const nonces = pages.map((p) => /'nonce-([^']+)'/.exec(String(p.headers['content-security-policy']))?.[1]);
      expect(nonces[0]).not.toBe(nonces[1]);
      expect(pages[1].body.replace(nonces[1] ?? '', 'N')).toBe(pages[0].body.replace(nonces[0] ?? '', 'N'));
    } finally {
      await second.close();
    }
  });

  it('writes no audit entry for page loads', async () => {
    await fetch(`${url}/devices`);
    await app.ctx.audit.flush();
    const rows = await database.storage.db.selectFrom('audit_log').select('path').execute();
    expect(rows.filter((r) => r.path === '/devices' || r.path.startsWith('/assets'))).toEqual([]);
  });
});

describe('a server whose console is not built', () => {
  it('says how to build it, and the API still works', async () => {
    const database = await freshDatabase();
    const app = await buildApp({
      storage: database.storage,
      console: { dir: join(tmpdir(), 'warren-no-console-here') },
    });
    const res = await app.inject({ method: 'GET', url: '/devices' });
    expect(res.statusCode).toBe(503);
    expect(res.body).toContain('npm run build:console');
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    await app.close();
    await database.drop();
  });
});

describe('the console as part of the app', () => {
  it('is served by the app every test builds, from the console build, with its headers', async () => {
    const server = await startServer();
    try {
      const res = await fetch(`${server.url}/keys`);
      // 200 with a build, 503 (and how to build it) without: either way the console's page.
      expect([200, 503]).toContain(res.status);
      expect(res.headers.get('content-type')).toContain('text/html');
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('cache-control')).toBe('no-cache');
    } finally {
      await server.close();
    }
  });

  it('is left out with console: false, the API alone', async () => {
    const database = await freshDatabase();
    const app = await buildApp({ storage: database.storage, console: false });
    try {
      for (const path of ['/', '/devices', '/assets/index.js']) {
        const res = await app.inject({ method: 'GET', url: path });
        expect(res.headers['content-type'] ?? '', path).not.toContain('text/html');
        expect(res.statusCode, path).toBeGreaterThanOrEqual(400);
      }
      expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await app.close();
      await database.drop();
    }
  });
});

/**
 * A real `warren serve` on loopback (SQLite file), the console built, and Chromium. People
 * sign in as an operator would let them: `warren console login` prints a one-time link.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const WARREN = join(ROOT, 'packages', 'cli', 'bin', 'warren.js');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Warren {
  url: string;
  db: string;
  apiKey: string;
  call<T = any>(method: string, path: string, body?: unknown, token?: string): Promise<T>;
  signInLink(user: string): string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? done(address.port) : fail(new Error('no port'))));
    });
  });
}

/**
 * Builds whatever is older than its sources: the console, and the server and CLI that
 * `warren serve` runs from their builds (a test of changed server code must not meet the old).
 */
export function buildConsole(): void {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
}

export async function startWarren(): Promise<Warren> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-console-browser-'));
  const db = `sqlite:${join(dir, 'warren.db')}`;
  const init = JSON.parse(
    execFileSync(process.execPath, [WARREN, 'init', '--db', db, '--json'], { cwd: ROOT }).toString(),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    process.execPath,
    [WARREN, 'serve', '--db', db, '--host', '127.0.0.1', '--port', String(port)],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'inherit'],
      // Single sign-on shows and uses absolute URLs only from the public URL.
      env: { ...process.env, WARREN_LOG_LEVEL: 'warn', WARREN_PUBLIC_URL: url },
    },
  );
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/readyz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (i > 150) throw new Error('warren serve did not become ready');
    await new Promise((r) => setTimeout(r, 100));
  }
  const call = async (method: string, path: string, body?: unknown, token = init.apiKey) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text ? JSON.parse(text) : undefined;
  };
  return {
    url,
    db,
    apiKey: init.apiKey,
    call,
    signInLink: (user) =>
      JSON.parse(
        execFileSync(
          process.execPath,
          [WARREN, 'console', 'login', '--network', 'default', '--user', user, '--db', db, '--url', url, '--json'],
          {
            cwd: ROOT,
          },
        ).toString(),
      ).url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Enrolls devices as agents do: a reusable auth key (of `user`, else the owner's), then one registration per hostname. */
export async function enroll(
  warren: Warren,
  hostnames: string[],
  options: { tags?: string[]; advertiseRoutes?: string[]; user?: string } = {},
): Promise<{ id: string; nodeToken: string }[]> {
  const key = await warren.call('POST', '/v1/keys', {
    reusable: true,
    tags: options.tags ?? [],
    ...(options.user ? { user: options.user } : {}),
  });
  const out = [];
  for (const hostname of hostnames) {
    const registered = await warren.call(
      'POST',
      '/v1/node/register',
      {
        hostname,
        os: 'linux',
        nodeKey: `nodekey:${randomBytes(32).toString('hex')}`,
        clientVersion: '1.2.3',
        ...(options.advertiseRoutes ? { advertiseRoutes: options.advertiseRoutes } : {}),
      },
      key.key,
    );
    out.push({ id: registered.device.id, nodeToken: registered.nodeToken });
  }
  return out;
}

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

export const WIDTHS = { desktop: { width: 1280, height: 900 }, phone: { width: 390, height: 844 } };

/** A browser context signed in as `user` through a one-time link; CSP violations fail the test. */
export async function signedIn(
  browser: Browser,
  warren: Warren,
  user: string,
  width = WIDTHS.desktop,
): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: width, baseURL: warren.url });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: warren.url });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
  });
  page.on('pageerror', (e) => problems.push(String(e)));
  await page.goto(warren.signInLink(user));
  await page.waitForURL(`${warren.url}/`);
  await page.getByRole('heading', { name: 'Devices' }).waitFor();
  return { context, page, problems };
}

const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core in the page: the serious and critical violations, as "rule: target" lines. */
export async function axe(page: Page): Promise<string[]> {
  // Injected through the DevTools protocol's evaluate, which the page's CSP does not govern.
  await page.evaluate(AXE);
  const result = await page.evaluate(async () => {
    const run = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return run.violations
      .filter((v: any) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: any) => `${v.id} (${v.impact}): ${v.nodes.map((n: any) => n.target.join(' ')).join(', ')}`);
  });
  return result as string[];
}

/**
 * Single sign-on from the console's sign-in page, in Chromium, through a real OpenID provider
 * (@warren/test-identity-provider on loopback): the person lands on the console signed in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// The server's public entry, as the CLI uses it: the console's tests never reach into its modules.
import { bootstrapIfEmpty, buildApp, openStorage, type Storage } from '@warren/server';
import { type IdentityProvider, startIdentityProvider } from '@warren/test-identity-provider';
import type { FastifyInstance } from 'fastify';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildConsole, launch } from './harness.ts';

describe('single sign-on in the console', () => {
  // In process, as `warren serve` builds it (the console included), because the provider on loopback speaks plain
  // http: a setting `warren serve` does not expose.
  let dir: string;
  let storage: Storage;
  let app: FastifyInstance;
  let warren: { url: string };
  let browser: Browser;
  let idp: IdentityProvider;

  beforeAll(async () => {
    buildConsole();
    dir = mkdtempSync(join(tmpdir(), 'warren-console-sso-'));
    storage = await openStorage(`sqlite:${join(dir, 'warren.db')}`);
    const created = await bootstrapIfEmpty(storage.db, Date.now());
    app = await buildApp({ storage, settings: { ssoAllowHttp: true } });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    warren = { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
    // Its address is known once it listens; single sign-on needs it as the public URL.
    app.ctx.settings.publicUrl = warren.url;
    browser = await launch();
    idp = await startIdentityProvider({ redirectUri: `${warren.url}/auth/callback` });
    const res = await fetch(`${warren.url}/v1/network/sso`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${created!.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        issuer: idp.issuer,
        clientId: idp.clientId,
        clientSecret: idp.clientSecret,
        allowedDomains: ['example.com'],
      }),
    });
    expect(res.status).toBe(200);
  });
  afterAll(async () => {
    await browser?.close();
    await idp?.close();
    await app?.close();
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('signs in through the identity provider from the sign-in page, and signs out', async () => {
    idp.signInAs({ email: 'admin@example.com', emailVerified: true });
    const context = await browser.newContext({ baseURL: warren.url });
    const page = await context.newPage();
    await page.goto('/devices');
    await page.getByRole('heading', { name: 'Sign in to Warren' }).waitFor();
    await page.getByLabel('Network').fill('default');
    await page.getByRole('button', { name: 'Sign in with single sign-on' }).click();
    await page.locator('.who').getByText('admin@example.com').waitFor({ timeout: 30_000 });
    expect((await context.request.get('/v1/me')).status()).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Warren' }).waitFor();
    expect((await context.request.get('/v1/me')).status()).toBe(401);
    await context.close();
  });
});

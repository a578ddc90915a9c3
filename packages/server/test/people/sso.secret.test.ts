/**
 * The OpenID client secret at rest: stored only sealed (AES-256-GCM under a key derived from
 * the server secret), opened to sign in against a real OpenID provider, refused with a clear
 * problem when the stored value was altered or copied to another network, and sealed in place
 * by the migration for rows written before it.
 */

import { type IdentityProvider, startIdentityProvider } from '@warren/test-identity-provider';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as sealedSsoSecrets from '../../src/storage/migrations/010_sealed_sso_secrets.js';
import { auditEntries, expectProblem } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';
import { Browser } from './browser.js';

let server: TestServer;
let idp: IdentityProvider;

beforeAll(async () => {
  server = await startServer({ settings: { ssoAllowHttp: true } });
  idp = await startIdentityProvider({ redirectUri: `${server.url}/auth/callback` });
});
afterAll(async () => {
  await idp?.close();
  await server?.close();
});

async function setSso(): Promise<void> {
  const body = { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret };
  const res = await server.call('PUT', '/v1/network/sso', { body });
  expect(res.status, await res.clone().text()).toBe(200);
}

const db = () => server.database.storage.db;
const storedSecret = async (networkId = server.networkId) =>
  (
    await db()
      .selectFrom('sso_configs')
      .select('client_secret')
      .where('network_id', '=', networkId)
      .executeTakeFirstOrThrow()
  ).client_secret;
const store = (value: string, networkId = server.networkId) =>
  db().updateTable('sso_configs').set({ client_secret: value }).where('network_id', '=', networkId).execute();

/** A whole sign-in through the provider: the callback answers 303 only once the provider took our client secret. */
async function signIn(network = 'test'): Promise<Response> {
  const browser = new Browser();
  const isCallback = (next: URL) => next.pathname === '/auth/callback';
  const walk = await browser.follow(`${server.url}/auth/login?network=${network}`, isCallback);
  if (!walk.next) return walk.response;
  return browser.get(walk.next);
}

describe('the single sign-on client secret at rest', () => {
  it('is stored only sealed, under a fresh nonce each time, and shown nowhere', async () => {
    await setSso();
    const first = await storedSecret();
    expect(first).toMatch(/^v1\.[A-Za-z0-9_-]+$/);
    expect(first).not.toContain(idp.clientSecret);
    expect(Buffer.from(first.slice(3), 'base64url').toString('latin1')).not.toContain(idp.clientSecret);
    await setSso();
    expect(await storedSecret()).not.toBe(first);

    const shown = [
      await (await server.call('GET', '/v1/network/sso')).text(),
      JSON.stringify(await auditEntries(server)),
      await (await server.call('GET', '/v1/events?since=1h')).text(),
    ].join('\n');
    expect(shown).not.toContain(idp.clientSecret);
    expect(shown).not.toContain(await storedSecret());
  });

  it('is opened to sign in through the provider', async () => {
    await setSso();
    const res = await signIn();
    expect(res.status, await res.clone().text()).toBe(303);
  });

  it('refuses to sign in with an altered sealed value, with a problem that says what to do', async () => {
    await setSso();
    const sealed = await storedSecret();
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    bytes[bytes.length - 20]! ^= 0x01; // one bit of the ciphertext
    await store(`v1.${bytes.toString('base64url')}`);
    const problem = await expectProblem(await signIn(), 503, 'unavailable');
    expect(problem.detail).toMatch(/client secret cannot be decrypted.*PUT \/v1\/network\/sso/);
    // The settings still read, so an administrator can see what to fix; setting them again heals.
    expect((await server.call('GET', '/v1/network/sso')).status).toBe(200);
    for (const broken of ['v1.', 'v1.AAAA', 'plain-text-secret', '']) {
      await store(broken);
      await expectProblem(await signIn(), 503, 'unavailable');
    }
    await setSso();
    expect((await signIn()).status).toBe(303);
  });

  it('does not open on another network: a sealed value is bound to its own', async () => {
    await setSso();
    const other = await server.addNetwork();
    const own = await db()
      .selectFrom('sso_configs')
      .selectAll()
      .where('network_id', '=', server.networkId)
      .executeTakeFirstOrThrow();
    await db()
      .insertInto('sso_configs')
      .values({ ...own, network_id: other.networkId })
      .execute();
    await expectProblem(await signIn(other.networkId), 503, 'unavailable');
  });
});

describe('migration 010', () => {
  it('seals a client secret stored in the clear, and sign-in works with the result', async () => {
    await setSso();
    await store(idp.clientSecret);
    // The row as versions before 010 wrote it, sealed by the migration itself (run directly:
    // the runner will not run it again on a database that has already applied later ones).
    await sealedSsoSecrets.up(db() as unknown as Kysely<unknown>);

    const sealed = await storedSecret();
    expect(sealed).toMatch(/^v1\./);
    expect(sealed).not.toContain(idp.clientSecret);
    expect((await json(await server.call('GET', '/v1/network/sso'))).clientId).toBe(idp.clientId);
    expect((await signIn()).status).toBe(303);
  });

  it('is one of the migrations every database runs', async () => {
    const applied = await db()
      .selectFrom('kysely_migration' as never)
      .select('name' as never)
      .execute();
    expect(applied.map((row) => (row as { name: string }).name)).toContain('010_sealed_sso_secrets');
  });
});

import { backend, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

describe('warren console login and users suspend|restore', () => {
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startServer();
    env = envOf(server);
  });
  afterAll(() => server.close());

  // The command opens the database itself (`--db`); on PostgreSQL the harness gives each test
  // file its own schema, which a database URL cannot name, so this runs on the SQLite file.
  it.runIf(backend === 'sqlite')('prints a one-time link that signs the person in once', async () => {
    const db = server.database.url;
    const run = await warren(
      ['console', 'login', '--network', 'test', '--user', 'owner@example.com', '--db', db, '--json'],
      env,
    );
    expect(run.code, run.stderr).toBe(0);
    const { url } = JSON.parse(run.stdout);
    expect(url).toMatch(new RegExp(`^${server.url}/auth/link\\?token=[A-Za-z0-9_-]{43}$`));
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(303);
    expect((await fetch(url, { redirect: 'manual' })).status).toBe(401);
    const unknown = await warren(
      ['console', 'login', '--network', 'test', '--user', 'nobody@example.com', '--db', db],
      env,
    );
    expect(unknown.code).toBe(1);
  });

  it('sets and shows single sign-on, taking the secret from the environment only', async () => {
    const args = ['sso', 'set', '--issuer', 'https://id.example.com/realms/acme', '--client-id', 'warren'];
    expect((await warren(args, env)).code).toBe(2);
    const set = await warren([...args, '--domain', 'example.com', '--json'], {
      ...env,
      WARREN_SSO_CLIENT_SECRET: 'the-secret',
    });
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({
      clientId: 'warren',
      allowedDomains: ['example.com'],
      enforce: false,
    });
    const got = await warren(['sso', 'get'], env);
    expect(got.stdout).toContain('https://id.example.com/realms/acme');
    expect(got.stdout).not.toContain('the-secret');
  });

  it('suspends and restores a user', async () => {
    await warren(['users', 'add', 'cy@example.com'], env);
    const suspended = await warren(['users', 'suspend', 'cy@example.com'], env);
    expect(suspended.stdout).toMatch(/^suspended cy@example\.com/);
    const restored = JSON.parse((await warren(['users', 'restore', 'cy@example.com', '--json'], env)).stdout);
    expect(restored.status).toBe('active');
  });
});

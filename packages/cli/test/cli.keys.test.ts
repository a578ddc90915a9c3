import { defineTags, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

describe('warren keys', () => {
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startServer();
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:ci']);
    env = envOf(server);
  });
  afterAll(() => server.close());

  it('creates an auth key and prints its secret once', async () => {
    const res = await warren(
      ['keys', 'create', '--reusable', '--ephemeral', '--expires', '24h', '--tag', 'tag:ci', '--description', 'ci'],
      env,
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Created auth key key_\w+ \(reusable ephemeral tag:ci, expires \S+\)\.$/m);
    expect(res.stdout).toMatch(/^ {2}wrn_auth_[0-9A-Za-z]+$/m);
    const id = /key_\w+/.exec(res.stdout)![0];

    // Never again: neither get nor list shows it.
    const get = await warren(['keys', 'get', id, '--json'], env);
    expect(JSON.parse(get.stdout)).not.toHaveProperty('key');
    expect((await warren(['keys', 'list'], env)).stdout).not.toContain('wrn_auth_');
  });

  it('creates a pre-approved auth key, and refuses the flag on an API key (exit 2)', async () => {
    const res = await warren(['keys', 'create', '--pre-approved'], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^Created auth key key_\w+ \(single-use pre-approved, expires \S+\)\.$/m);
    const id = /key_\w+/.exec(res.stdout)![0];
    expect(JSON.parse((await warren(['keys', 'get', id, '--json'], env)).stdout).preApproved).toBe(true);
    const api = await warren(['keys', 'create', '--api', '--name', 'x', '--scope', 'read', '--pre-approved'], env);
    expect(api.code).toBe(2);
    expect(api.stderr).toContain('--pre-approved');
  });

  it('--quiet prints only the secret, --json the key with it', async () => {
    const quiet = await warren(['keys', 'create', '--quiet'], env);
    expect(quiet.stdout).toMatch(/^wrn_auth_[0-9A-Za-z]+\n$/);
    const json = JSON.parse((await warren(['keys', 'create', '--json', '--user', 'owner@example.com'], env)).stdout);
    expect(json.key).toMatch(/^wrn_auth_/);
    expect(json).toMatchObject({ type: 'auth', reusable: false, state: 'valid' });
  });

  it('creates a scoped API key that works', async () => {
    const res = await warren(
      ['keys', 'create', '--api', '--name', 'ci-bot', '--scope', 'read', '--scope', 'devices', '--expires', '30d'],
      env,
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Created API key "ci-bot" key_\w+ \(scopes read,devices, expires /m);
    const secret = /wrn_api_[0-9A-Za-z]+/.exec(res.stdout)![0];
    expect((await warren(['network'], { ...env, WARREN_API_KEY: secret })).code).toBe(0);
    // read + devices cannot create users.
    const denied = await warren(['users', 'add', 'x@example.com'], { ...env, WARREN_API_KEY: secret });
    expect(denied.code).toBe(1);
    expect(denied.stderr).toMatch(/^warren: insufficient_scope: /);
  });

  it('lists keys in a table, filters them, shows and revokes one', async () => {
    const id = JSON.parse((await warren(['keys', 'create', '--json', '--description', 'to revoke'], env)).stdout).id;
    const table = await warren(['keys', 'list', '--type', 'auth'], env);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +TYPE +NAME +DETAILS +STATE +EXPIRES +USES +LAST USED$/);
    expect(lines.slice(1).every((line) => / auth /.test(line))).toBe(true);
    expect(table.stdout).toMatch(new RegExp(`^${id} +auth +to revoke +single-use +valid +in (89|90)d +0 +never$`, 'm'));

    const shown = await warren(['keys', 'get', id], env);
    expect(shown.stdout).toMatch(/^state +valid$/m);
    expect(shown.stdout).toMatch(/^description +to revoke$/m);

    expect((await warren(['keys', 'delete', id], env)).stdout).toBe(`revoked key ${id}\n`);
    const revoked = JSON.parse((await warren(['keys', 'list', '--state', 'revoked', '--json'], env)).stdout);
    expect(revoked.keys.map((k: any) => k.id)).toEqual([id]);
  });

  it('refuses mixed or incomplete flags and malformed durations before calling the API (exit 2), and durations the API refuses (exit 1)', async () => {
    const mixed = await warren(['keys', 'create', '--api', '--name', 'x', '--scope', 'read', '--reusable'], env);
    expect(mixed).toMatchObject({ code: 2, stderr: 'warren: --reusable: only for auth keys (drop --api)\n' });
    expect((await warren(['keys', 'create', '--scope', 'read'], env)).code).toBe(2);
    expect((await warren(['keys', 'create', '--api', '--name', 'x'], env)).code).toBe(2);
    const malformed = await warren(['keys', 'create', '--expires', '2w'], env);
    expect(malformed).toMatchObject({
      code: 2,
      stderr: 'warren: --expires must be a duration such as 90s, 15m, 24h or 7d (got "2w")\n',
    });
    const tooLong = await warren(['keys', 'create', '--expires', '400d'], env);
    expect(tooLong.code).toBe(1);
    expect(tooLong.stderr).toMatch(/^warren: invalid_duration: expiresIn may not exceed 365d/);
  });

  it('refuses an unknown list filter value before calling the API (exit 2), naming the values', async () => {
    const offline = { WARREN_URL: 'http://127.0.0.1:9', WARREN_API_KEY: env.WARREN_API_KEY };
    expect(await warren(['keys', 'list', '--type', 'nope'], offline)).toMatchObject({
      code: 2,
      stderr: 'warren: --type must be one of auth, api (got "nope")\n',
    });
    expect(await warren(['keys', 'list', '--state', 'nope'], offline)).toMatchObject({
      code: 2,
      stderr: 'warren: --state must be one of valid, expired, revoked, used (got "nope")\n',
    });
    expect(await warren(['routes', 'list', '--state', 'nope'], offline)).toMatchObject({
      code: 2,
      stderr: 'warren: --state must be one of pending, approved, disabled (got "nope")\n',
    });
    expect(await warren(['users', 'list', '--role', 'boss'], offline)).toMatchObject({
      code: 2,
      stderr: 'warren: role must be one of owner, admin, network-admin, it-admin, auditor, member (got "boss")\n',
    });
  });
});

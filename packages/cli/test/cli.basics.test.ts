import { json as body, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

describe('warren client commands: environment, errors and exit codes', () => {
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startServer();
    env = envOf(server);
  });
  afterAll(() => server.close());

  it('explains a missing WARREN_API_KEY and exits 2', async () => {
    const res = await warren(['network'], { WARREN_URL: server.url });
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(/^warren: WARREN_API_KEY is not set/);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('prints an API error as one line with its code and exits 1', async () => {
    const res = await warren(['keys', 'get', 'key_nope'], env);
    expect(res).toEqual({ code: 1, stdout: '', stderr: 'warren: not_found: key key_nope does not exist\n' });
  });

  it('a wrong key is unauthenticated (exit 1)', async () => {
    const res = await warren(['network'], { ...env, WARREN_API_KEY: `wrn_api_${'x'.repeat(40)}` });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^warren: unauthenticated: /);
  });

  it('says when the server cannot be reached (exit 1)', async () => {
    const res = await warren(['network'], { ...env, WARREN_URL: 'http://127.0.0.1:9' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^warren: cannot reach Warren at http:\/\/127\.0\.0\.1:9/);
  });

  it('usage mistakes exit 2: unknown option, missing argument, conflicting flags', async () => {
    const unknown = await warren(['devices', 'list', '--bogus'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^warren: unknown option '--bogus'/);
    expect((await warren(['keys', 'get'], env)).code).toBe(2);
    const both = await warren(['devices', 'list', '--online', '--offline'], env);
    expect(both).toMatchObject({ code: 2, stderr: 'warren: pass --online or --offline, not both\n' });
    expect((await warren(['users', 'add', 'x@example.com', '--role', 'king'], env)).code).toBe(2);
  });

  it('--help lists every command group and shows examples', async () => {
    const res = await warren(['--help'], env);
    expect(res.code).toBe(0);
    for (const group of ['devices', 'users', 'network', 'keys', 'acl', 'routes', 'serve', 'init']) {
      expect(res.stdout).toContain(group);
    }
    expect(res.stdout).toContain('Examples:');
    const keys = await warren(['keys', 'create', '--help'], env);
    expect(keys.code).toBe(0);
    expect(keys.stdout).toContain('warren keys create --api --name deploy-bot');
  });

  it('a group without a subcommand prints its help and exits 2', async () => {
    const res = await warren(['devices'], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Usage: warren devices');
  });

  it('warren whoami names the key, its network and scopes; --json the API body', async () => {
    const res = await warren(['whoami'], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^caller +API key \S+ \(key_\w+\)$/m);
    expect(res.stdout).toMatch(new RegExp(`^network +test \\(${server.networkId}\\)$`, 'm'));
    expect(res.stdout).toMatch(/^scopes +all$/m);
    const json = JSON.parse((await warren(['whoami', '--json'], env)).stdout);
    expect(json).toEqual(await body(await server.call('GET', '/v1/me')));
  });

  it('warren network prints plan, limits and usage; --json the API body', async () => {
    const res = await warren(['network'], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^network +test \(net_\w+\)$/m);
    expect(res.stdout).toMatch(/^plan +premium$/m);
    expect(res.stdout).toMatch(/^users +1 of unlimited$/m);
    const json = JSON.parse((await warren(['network', '--json'], env)).stdout);
    expect(json).toMatchObject({ id: server.networkId, plan: 'premium' });
  });
});

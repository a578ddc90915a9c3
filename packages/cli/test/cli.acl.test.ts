import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { json, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WARREN_FROM_SOURCES } from './bin.js';
import { envOf, warren } from './run.js';

const VALID = `{
  // ops reach the servers
  "groups": { "group:eng": ["owner@example.com"] },
  "tagOwners": { "tag:server": ["group:eng"] },
  "acls": [
    { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22"] },
  ],
}
`;

const INVALID = `{
  "tagOwners": { "tag:server": ["autogroup:admin"] },
  "acls": [
    { "action": "accept", "src": ["group:ops"], "dst": ["tag:server:22"] },
    { "action": "allow", "src": ["*"], "dst": ["tag:server:22"] },
  ],
}
`;

describe('warren acl', () => {
  let server: TestServer;
  let env: Record<string, string>;
  const dir = mkdtempSync(join(tmpdir(), 'warren-acl-'));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  beforeAll(async () => {
    server = await startServer();
    env = envOf(server);
  });
  afterAll(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('get prints the stored HuJSON text so it can be redirected to a file; --json the JSON form', async () => {
    const res = await warren(['acl', 'get'], env);
    expect(res.code).toBe(0);
    const stored = await (await server.call('GET', '/v1/acl', { headers: { accept: 'application/hujson' } })).text();
    expect(res.stdout).toBe(stored.endsWith('\n') ? stored : `${stored}\n`);
    const json = JSON.parse((await warren(['acl', 'get', '--json'], env)).stdout);
    expect(Array.isArray(json.acls)).toBe(true);
    const withEtag = await warren(['acl', 'get', '--etag'], env);
    expect(withEtag.stderr).toMatch(/^etag: \S+\n$/);
  });

  it('validate prints FILE: valid and exits 0', async () => {
    const path = file('valid.hujson', VALID);
    expect(await warren(['acl', 'validate', path], env)).toEqual({ code: 0, stdout: `${path}: valid\n`, stderr: '' });
  });

  it('validate prints FILE:LINE:COLUMN: problem per error like a compiler, and exits 1', async () => {
    const path = file('invalid.hujson', INVALID);
    const res = await warren(['acl', 'validate', path], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe('');
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) expect(line).toMatch(new RegExp(`^${path.replaceAll('.', '\\.')}:\\d+:\\d+: \\S`));
    expect(lines.some((l) => l.startsWith(`${path}:4:`) && l.includes('group:ops'))).toBe(true);
    expect(lines.some((l) => l.startsWith(`${path}:5:`) && l.includes('allow'))).toBe(true);
  });

  it('validate of a missing file is a usage error', async () => {
    const res = await warren(['acl', 'validate', join(dir, 'nope.hujson')], env);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/^warren: cannot read .*nope\.hujson: no such file\n$/);
  });

  it('apply replaces the policy (with If-Match by default) and keeps the file verbatim', async () => {
    const path = file('apply.hujson', VALID);
    const res = await warren(['acl', 'apply', path], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(new RegExp(`^${path.replaceAll('.', '\\.')}: applied \\(etag \\S+\\)\\n$`));
    expect((await warren(['acl', 'get'], env)).stdout).toBe(VALID);
    // The round trip: get > file, apply file.
    const roundTrip = file('roundtrip.hujson', (await warren(['acl', 'get'], env)).stdout);
    expect((await warren(['acl', 'apply', roundTrip], env)).code).toBe(0);
    expect(readFileSync(roundTrip, 'utf8')).toBe(VALID);
  });

  it('apply of an invalid policy prints its problems and exits 1; nothing changes', async () => {
    const before = (await warren(['acl', 'get'], env)).stdout;
    const path = file('bad.hujson', INVALID);
    const res = await warren(['acl', 'apply', path], env);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(res.stderr).toMatch(new RegExp(`^${path.replaceAll('.', '\\.')}:4:\\d+: .*group:ops`, 'm'));
    expect(res.stderr).toMatch(/^warren: policy_invalid: /m);
    expect((await warren(['acl', 'get'], env)).stdout).toBe(before);
  });

  it('validate --json and apply --json print the API responses; invalid still exits 1', async () => {
    const invalid = await warren(['acl', 'validate', file('invalid-json.hujson', INVALID), '--json'], env);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toBe('');
    const body = JSON.parse(invalid.stdout);
    expect(body.valid).toBe(false);
    expect(body).toEqual(await json(await server.call('POST', '/v1/acl/validate', { raw: INVALID })));
    const valid = await warren(['acl', 'validate', file('valid-json.hujson', VALID), '--json'], env);
    expect(valid.code).toBe(0);
    expect(JSON.parse(valid.stdout)).toMatchObject({ valid: true, errors: [] });
    const applied = await warren(['acl', 'apply', file('apply-json.hujson', VALID), '--json'], env);
    expect(applied.code).toBe(0);
    expect(JSON.parse(applied.stdout)).toEqual(await json(await server.call('GET', '/v1/acl')));
  });

  it('validate and apply read stdin for -, naming it <stdin>', async () => {
    const piped = (args: string[], input: string) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(
          process.execPath,
          [...WARREN_FROM_SOURCES, 'acl', ...args],
          { env: { ...process.env, ...env } },
          (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
        );
        child.stdin?.end(input);
      });
    const invalid = await piped(['validate', '-'], INVALID);
    expect(invalid.code, invalid.stderr).toBe(1);
    expect(invalid.stdout).toMatch(/^<stdin>:4:\d+: .*group:ops/m);
    expect(await piped(['apply', '-'], VALID)).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^<stdin>: applied /),
    });
  });

  it('history lists the stored versions, newest first, and prints one version as it was sent', async () => {
    await warren(['acl', 'apply', file('history.hujson', VALID)], env);
    const res = await warren(['acl', 'history'], env);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^VERSION +ETAG +CREATED +BY$/m);
    const { versions } = JSON.parse((await warren(['acl', 'history', '--json'], env)).stdout);
    expect(versions).toEqual((await json(await server.call('GET', '/v1/acl/history'))).versions);
    const newest = versions[0];
    const text = await warren(['acl', 'history', String(newest.version), '--etag'], env);
    expect(text).toEqual({ code: 0, stdout: VALID, stderr: `etag: ${newest.etag}\n` });
    const missing = await warren(['acl', 'history', String(newest.version + 1)], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^warren: not_found: /);
    expect((await warren(['acl', 'history', '0'], env)).code).toBe(2);
    expect((await warren(['acl', 'history', '1', '--json'], env)).code).toBe(2);
  });

  it('apply --if-match with a stale ETag is refused with precondition_failed', async () => {
    const stale = (await warren(['acl', 'get', '--etag'], env)).stderr.replace(/^etag: /, '').trim();
    await warren(['acl', 'apply', file('v2.hujson', VALID.replace('22', '22,443'))], env);
    const res = await warren(['acl', 'apply', file('v3.hujson', VALID), '--if-match', stale], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^warren: precondition_failed: /);
  });
});

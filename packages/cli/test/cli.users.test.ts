import { startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

describe('warren users', () => {
  let server: TestServer;
  let env: Record<string, string>;
  beforeAll(async () => {
    server = await startServer({ plan: 'free' });
    env = envOf(server);
  });
  afterAll(() => server.close());

  it('adds, lists, changes the role of and removes a user by login name', async () => {
    const added = await warren(['users', 'add', 'ana@example.com', '--name', 'Ana', '--role', 'admin'], env);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/^added ana@example\.com \(usr_\w+\), role admin\n$/);

    const list = await warren(['users', 'list'], env);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^ID +LOGIN NAME +DISPLAY NAME +ROLE +DEVICES +LAST SEEN$/);
    expect(lines).toHaveLength(3);
    // The test clock stands still, so both users share a creation time and either may come first.
    expect(list.stdout).toMatch(/^usr_\w+ +ana@example\.com +Ana +admin +0 +never$/m);
    // Columns line up: every row starts its second column where the header does.
    const at = lines[0]!.indexOf('LOGIN NAME');
    expect(lines.slice(1).every((line) => line.slice(at).match(/^\S+@/))).toBe(true);

    const admins = JSON.parse((await warren(['users', 'list', '--role', 'admin', '--json'], env)).stdout);
    expect(admins.users.map((u: any) => u.loginName)).toEqual(['ana@example.com']);

    const changed = await warren(['users', 'set-role', 'ana@example.com', 'auditor'], env);
    expect(changed.stdout).toContain('role auditor');

    const asJson = await warren(['users', 'add', 'bo@example.com', '--role', 'member', '--json'], env);
    const bo = JSON.parse(asJson.stdout);
    expect(bo).toMatchObject({ loginName: 'bo@example.com', role: 'member', id: expect.stringMatching(/^usr_/) });
    const promoted = JSON.parse((await warren(['users', 'set-role', bo.id, 'admin', '--json'], env)).stdout);
    expect(promoted).toEqual({ ...bo, role: 'admin' });
    expect((await warren(['users', 'remove', bo.id], env)).code).toBe(0);

    const removed = await warren(['users', 'remove', 'ana@example.com'], env);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/^removed user ana@example\.com \(usr_\w+\) and their devices\n$/);
    // gone: not_found, as for an unknown id (exit 1)
    expect((await warren(['users', 'remove', 'ana@example.com'], env)).code).toBe(1);
  });

  it('a plan limit is an API error: exit 1 and the code on stderr', async () => {
    await warren(['users', 'add', 'b@example.com'], env);
    await warren(['users', 'add', 'c@example.com'], env);
    const res = await warren(['users', 'add', 'd@example.com'], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^warren: plan_limit: /);
  });

  it('an empty result says so on stderr and leaves stdout empty', async () => {
    const res = await warren(['users', 'list', '--role', 'it-admin'], env);
    expect(res).toEqual({ code: 0, stdout: '', stderr: 'no users match\n' });
  });
});

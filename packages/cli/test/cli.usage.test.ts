/**
 * Usage mistakes exit 2 with one line on stderr that names the mistake, before any request is
 * made; refusals by the server stay exit 1.
 */

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { envOf, warren } from './run.js';

/** Nothing listens here: a command that reached for the server would exit 1, not 2. */
const NOWHERE = { WARREN_URL: 'http://127.0.0.1:9', WARREN_API_KEY: `wrn_api_${'x'.repeat(40)}` };

async function mistake(args: string[], names: string | RegExp): Promise<string> {
  const res = await warren(args, NOWHERE);
  expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
  expect(res.stdout).toBe('');
  const lines = res.stderr.split('\n');
  expect(lines, res.stderr).toHaveLength(2); // one line and its newline
  expect(lines[0]).toMatch(/^warren: /);
  expect(lines[0]).toMatch(names);
  return lines[0] as string;
}

describe('warren: usage mistakes', () => {
  it('an unknown command, naming it and where help is', async () => {
    const line = await mistake(['devcies', 'list'], "unknown command 'devcies'");
    expect(line).toContain('warren --help');
    expect(await mistake(['devices', 'lsit'], "unknown command 'lsit'")).toContain('warren devices --help');
  });

  it('an unknown flag, naming it and the command’s help', async () => {
    const line = await mistake(['devices', 'list', '--bogus'], "unknown option '--bogus'");
    expect(line).toContain('(see: warren devices list --help)');
    await mistake(['keys', 'create', '--reusabel'], "unknown option '--reusabel'");
  });

  it('a missing argument or required flag, or one too many', async () => {
    await mistake(['keys', 'get'], "missing required argument 'id'");
    await mistake(['node', 'simulate', '--auth-key', 'wrn_auth_x'], "required option '--count <n>'");
    await mistake(['devices', 'list', 'extra'], 'too many arguments');
  });

  it('a bad flag value, before any request', async () => {
    await mistake(['logs', 'connections', '--follow', '--interval', '0'], /--interval .*greater than 0.*"0"/);
    await mistake(['logs', 'audit', '--interval', '-1'], /--interval .*"-1"/);
    await mistake(['logs', 'connections', '--interval', 'soon'], /--interval .*"soon"/);
    await mistake(['logs', 'connections', '--limit', 'abc'], /--limit .*"abc"/);
    // Whole numbers are plain decimal: Number() would read these as 16, 100, 5 and 5.
    for (const written of ['0x10', '1e2', '+5', ' 5']) {
      await mistake(['logs', 'audit', '--limit', written], /--limit must be a positive integer/);
      await mistake(['node', 'simulate', '--count', written, '--auth-key', 'wrn_auth_x'], /--count .*positive integer/);
      await mistake(
        ['keys', 'create', '--api', '--name', 'x', '--scope', 'read', '--rate-limit', written],
        /--rate-limit must be a positive integer/,
      );
      await mistake(
        ['keys', 'set-limit', 'key_x', written, '--db', 'sqlite::memory:'],
        /limit must be a positive integer/,
      );
    }
    await mistake(['logs', 'audit', '--since', '1w'], /--since .*"1w"/);
    await mistake(['node', 'simulate', '--count', 'abc', '--auth-key', 'wrn_auth_x'], /--count .*"abc"/);
    await mistake(['node', 'simulate', '--count', '0', '--auth-key', 'wrn_auth_x'], /--count .*"0"/);
    await mistake(['keys', 'create', '--expires', '1w'], /--expires .*"1w"/);
    await mistake(['keys', 'create', '--api', '--name', 'x', '--scope', 'root'], /"root" is not a scope/);
    await mistake(['keys', 'create', '--quiet', '--json'], 'pass --json or --quiet, not both');
    await mistake(
      ['sso', 'set', '--issuer', 'https://id.example.com', '--client-id', 'w', '--client-secret-file', '/nonexistent'],
      /^warren: cannot read \/nonexistent: no such file$/,
    );
    // A webhook's deliveries page by cursor alone: a --since would be taken and do nothing.
    await mistake(['webhooks', 'deliveries', 'whk_x', '--since', '1h'], "unknown option '--since'");
    await mistake(['webhooks', 'deliveries', 'whk_x', '--state', 'lost'], /--state must be one of pending, delivered/);
  });

  it('a WARREN_URL or --server that is not the address of a server', async () => {
    const urls: [string, RegExp][] = [
      ['127.0.0.1:8080', /^warren: WARREN_URL must start with http:\/\/ or https:\/\/ \(got "127\.0\.0\.1:8080"\)\n$/],
      ['http://exa mple', /^warren: WARREN_URL is not a URL \(got "http:\/\/exa mple"\)\n$/],
      ['http://127.0.0.1:9/v1', /^warren: WARREN_URL is the server's address, without \/v1 /],
      ['http://127.0.0.1:9/v1/', /without \/v1/],
    ];
    for (const [url, names] of urls) {
      const res = await warren(['network'], { ...NOWHERE, WARREN_URL: url });
      expect(res, url).toMatchObject({ code: 2, stdout: '' });
      expect(res.stderr, url).toMatch(names);
    }
    // A sign-in link made of a bad address would open nothing.
    const link = await warren(
      ['console', 'login', '--network', 'n', '--user', 'a@example.com', '--url', 'warren.example.com'],
      {},
    );
    expect(link).toMatchObject({ code: 2, stdout: '' });
    expect(link.stderr).toMatch(/^warren: --url must start with http:\/\/ or https:\/\//);
    const agent = await warren(['node', 'up', '--auth-key', 'wrn_auth_x', '--server', 'http://127.0.0.1:9/v1'], {});
    expect(agent).toMatchObject({ code: 2, stdout: '' });
    expect(agent.stderr).toMatch(/^warren: --server is the server's address, without \/v1 /);
  });

  it('bad values of the server commands', async () => {
    await mistake(['init', '--db', 'sqlite::memory:', '--plan', 'gold'], /--plan .*"gold"/);
    await mistake(['init', '--db', 'sqlite::memory:', '--owner', 'nobody'], /--owner .*"nobody"/);
    for (const name of ['', ' lab', 'lab\n', 'l\u001b[2Jab', 'lab\u202e', 'x'.repeat(65)]) {
      await mistake(
        ['init', '--db', 'sqlite::memory:', '--network', name],
        /^warren: --network must be 1 to 64 characters/,
      );
    }
    await mistake(['init', '--db', 'mysql://db/warren'], /unsupported database URL "mysql:\/\/db\/warren"/);
    await mistake(['networks', 'set-plan', 'net_x', 'gold', '--db', 'sqlite::memory:'], /plan .*"gold"/);
    await mistake(['serve', '--port', 'http'], /invalid port "http"/);
    await mistake(['serve', '--port', '70000'], /invalid port "70000"/);
    await mistake(['serve', '--db', 'mysql://db/warren'], /unsupported database URL/);
  });
});

describe('warren: refusals by the server stay exit 1', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(() => server.close());

  it('a well-formed call the API refuses', async () => {
    const res = await warren(['keys', 'create', '--expires', '365d'], envOf(server));
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^warren: insufficient_scope: /);
    expect(res.stderr.split('\n')).toHaveLength(2);
  });

  it('a name that matches nothing is the network’s answer, like a 404', async () => {
    const device = await warren(['devices', 'get', 'no-such-host'], envOf(server));
    expect(device).toMatchObject({
      code: 1,
      stderr: 'warren: not_found: no device is named "no-such-host" (pass its id, dev_…)\n',
    });
    expect((await warren(['devices', 'get', 'dev_nosuchdevice'], envOf(server))).code).toBe(1);
    const user = await warren(['users', 'set-role', 'nobody@example.com', 'admin'], envOf(server));
    expect(user).toMatchObject({
      code: 1,
      stderr: 'warren: not_found: no user has the login name "nobody@example.com"\n',
    });
  });
});

describe('warren: a database that cannot be opened', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-db-'));
  const notADatabase = join(dir, 'notes.txt');
  writeFileSync(notADatabase, 'not a database, but long enough for SQLite to read its header\n'.repeat(4));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('names the database and the reason, and exits 1', async () => {
    for (const command of ['init', 'serve']) {
      const res = await warren([command, '--db', `sqlite:${notADatabase}`], NOWHERE);
      expect(res, command).toEqual({
        code: 1,
        stdout: '',
        stderr: `warren: cannot open the database sqlite:${notADatabase}: file is not a database\n`,
      });
    }
  });

  it('an operator command on an id the database does not hold: not_found, exit 1', async () => {
    expect(await warren(['networks', 'set-plan', 'net_missing', 'free', '--db', 'sqlite::memory:'], NOWHERE)).toEqual({
      code: 1,
      stdout: '',
      stderr: 'warren: not_found: network net_missing does not exist\n',
    });
    const key = await warren(['keys', 'set-limit', 'key_missing', '500', '--db', 'sqlite::memory:'], NOWHERE);
    expect(key).toMatchObject({ code: 1, stdout: '' });
    expect(key.stderr).toMatch(/^warren: not_found: API key key_missing does not exist/);
  });

  it('hides the password, in the user part or in the query', async () => {
    const res = await warren(['init', '--db', 'postgres://warren:s3cret@127.0.0.1:9/warren?password=hunter2'], NOWHERE);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^warren: cannot open the database postgres:\/\/warren:\*\*\*@127\.0\.0\.1:9\/warren\?password=\*\*\*: .*ECONNREFUSED/,
    );
    expect(res.stderr).not.toMatch(/s3cret|hunter2/);
  });
});

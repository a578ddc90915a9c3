import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStorage } from '@warren/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// On a busy machine one start of `warren` alone can take several seconds, so these tests get more
// room than the default.
const SPAWN_MS = 45_000;
const ROOT = join(import.meta.dirname, '..', '..', '..');
/**
 * `warren` as a person starts it after `npm install`: bin/warren.js, which runs the build. The
 * build is brought up to date with the sources first (scripts/build.mjs rebuilds only what is
 * older than its sources), so the file tests the code as it is. The file starts the command
 * fifteen times: from the build a start costs about a third of the CPU of one from the sources
 * through tsx, which compiles them at every start.
 */
const WARREN = [join(ROOT, 'packages', 'cli', 'bin', 'warren.js')];
beforeAll(() => {
  const build = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  expect(build.status, build.stderr).toBe(0);
}, 180_000);
const dir = mkdtempSync(join(tmpdir(), 'warren-cli-'));
// Servers a failed test left running are stopped, so no run leaves processes behind.
const servers = new Set<ChildProcess>();
afterAll(() => {
  for (const child of servers) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function startServe(db: string, logLevel = 'warn'): ChildProcess {
  const child = spawn(process.execPath, [...WARREN, 'serve', '--port', '0', '--db', db], {
    env: { ...process.env, WARREN_LOG_LEVEL: logLevel },
  });
  servers.add(child);
  return child;
}

function run(
  args: string[],
  env: Record<string, string> = {},
  options: { cwd?: string } = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const { WARREN_DB: _, ...inherited } = process.env;
    // Killed (code null) if it never ends, so a hang fails the test instead of stalling the run.
    const child = spawn(process.execPath, [...WARREN, ...args], {
      env: { ...inherited, ...env },
      timeout: SPAWN_MS,
      ...options,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Everything a child has printed so far (on stdout, or stderr), and a way to wait for a pattern in it. */
function watch(child: ChildProcess, stream: 'stdout' | 'stderr' = 'stdout') {
  let seen = '';
  child[stream]?.on('data', (d) => (seen += d));
  return {
    output: () => seen,
    waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const poll = setInterval(() => {
          const match = seen.match(pattern);
          if (match) {
            clearInterval(poll);
            resolve(match);
          } else if (Date.now() - started > SPAWN_MS) {
            clearInterval(poll);
            reject(new Error(`timed out waiting for ${pattern}; got: ${seen}`));
          }
        }, 20);
      });
    },
  };
}

describe('warren init and serve', { timeout: 2 * SPAWN_MS }, () => {
  it('init --json prints only the network id and its API key, one more network per call', async () => {
    const db = `sqlite:${join(dir, 'init.db')}`;
    const first = await run(['init', '--db', db, '--json', '--plan', 'free']);
    expect(first.code).toBe(0);
    const parsed = JSON.parse(first.stdout);
    expect(Object.keys(parsed).sort()).toEqual(['apiKey', 'networkId']);
    expect(parsed.apiKey).toMatch(/^wrn_api_/);
    const second = JSON.parse((await run(['init', '--db', db, '--json'])).stdout);
    expect(second.networkId).not.toBe(parsed.networkId);
  });

  it("keys set-limit raises an API key's rate limit on the database and audits it", async () => {
    const db = `sqlite:${join(dir, 'limit.db')}`;
    const { networkId } = JSON.parse((await run(['init', '--db', db, '--json'])).stdout);
    const storage = await openStorage(db);
    try {
      const key = await storage.db
        .selectFrom('keys')
        .select('id')
        .where('network_id', '=', networkId)
        .executeTakeFirstOrThrow();
      const res = await run(['keys', 'set-limit', key.id, '500', '--db', db]);
      expect(res.code).toBe(0);
      expect(res.stdout).toContain('500 requests a minute');
      const row = await storage.db
        .selectFrom('keys')
        .select('rate_limit')
        .where('id', '=', key.id)
        .executeTakeFirstOrThrow();
      expect(row.rate_limit).toBe(500);
      const audit = await storage.db.selectFrom('audit_log').selectAll().where('target', '=', key.id).execute();
      expect(audit.map((a) => a.action)).toContain('key.set_limit');
      expect((await run(['keys', 'set-limit', 'key_missing', '500', '--db', db])).code).not.toBe(0);
      expect((await run(['keys', 'set-limit', key.id, 'lots', '--db', db])).code).not.toBe(0);
    } finally {
      await storage.close();
    }
  });

  it('without --db or WARREN_DB, init makes ./data and its SQLite file', async () => {
    const cwd = mkdtempSync(join(dir, 'cwd-'));
    const res = await run(['init', '--json'], {}, { cwd });
    expect(res.code, res.stderr).toBe(0);
    expect(Object.keys(JSON.parse(res.stdout))).toEqual(['networkId', 'apiKey']);
    expect(existsSync(join(cwd, 'data', 'warren.db'))).toBe(true);
  });

  it.skipIf(!existsSync('/proc/self'))(
    'a folder that cannot be made (under /proc) is an error, not a hang',
    async () => {
      const res = await run(['init', '--db', 'sqlite:/proc/warren-test/data/warren.db']);
      expect(res).toEqual({
        code: 1,
        stdout: '',
        stderr:
          "warren: cannot open the database sqlite:/proc/warren-test/data/warren.db: ENOENT: no such file or directory, mkdir '/proc/warren-test'\n",
      });
    },
  );

  it('rejects a bad plan with a clear error and a non-zero exit', async () => {
    const res = await run(['init', '--db', `sqlite:${join(dir, 'bad.db')}`, '--plan', 'gold']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('--plan');
  });

  it('serves on an empty database, prints the first key once, and stops cleanly on SIGTERM', async () => {
    const db = `sqlite:${join(dir, 'serve.db')}`;
    const child = startServe(db);
    const out = watch(child);
    const [, key] = await out.waitFor(/\s(wrn_api_[0-9A-Za-z]+)\s/);
    const [, url] = await out.waitFor(/serving on (http:\/\/[0-9.:]+)/);
    const res = await fetch(`${url}/v1/network`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { name: string }).name).toBe('default');
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);

    // A second start on the same database creates nothing and prints no key.
    const again = startServe(db);
    const againOut = watch(again);
    await againOut.waitFor(/serving on/);
    const closed = new Promise((resolve) => again.on('close', resolve));
    again.kill('SIGINT');
    await closed;
    expect(againOut.output()).not.toContain('wrn_api_');
  });

  it('a first start that cannot listen still shows the first key, which the next start serves', async () => {
    const db = `sqlite:${join(dir, 'busy.db')}`;
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const port = String((busy.address() as AddressInfo).port);
    let key: string | undefined;
    try {
      const failed = await run(['serve', '--port', port, '--db', db], { WARREN_LOG_LEVEL: 'warn' });
      expect(failed.code).toBe(1);
      expect(failed.stderr).toContain('EADDRINUSE');
      key = failed.stdout.match(/\s(wrn_api_[0-9A-Za-z]+)\s/)?.[1];
      expect(key, failed.stdout).toBeDefined();
      expect(failed.stdout).not.toContain('serving on');
    } finally {
      busy.close();
    }
    const child = startServe(db);
    const out = watch(child);
    const [, url] = await out.waitFor(/serving on (http:\/\/[0-9.:]+)/);
    expect(out.output()).not.toContain('wrn_api_');
    expect((await fetch(`${url}/v1/network`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    const exited = new Promise((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  it('prints the command that signs the owner in to the console, and that command works as printed', async () => {
    // The printed command runs the build, brought up to date before the first test.
    const db = `sqlite:${join(dir, 'banner.db')}`;
    const child = startServe(db);
    const out = watch(child);
    const [, url] = await out.waitFor(/serving on (http:\/\/[0-9.:]+)/);
    const [, command] = await out.waitFor(/^ {2}(npx warren console login .*)$/m);
    expect(command).toBe(`npx warren console login --network default --user admin@example.com --db ${db} --url ${url}`);
    // Exactly the printed line, through a shell, in the checkout, as a person would paste it.
    const login = spawnSync('sh', ['-c', command as string], { cwd: ROOT, encoding: 'utf8' });
    expect(login.status, login.stderr).toBe(0);
    const [link] = login.stdout.match(/http:\S+\/auth\/link\?token=\S+/) ?? [];
    expect(link?.startsWith(`${url}/auth/link?token=`), login.stdout).toBe(true);
    const signedIn = await fetch(link as string, { redirect: 'manual' });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toBeTruthy();
    const closed = new Promise((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    await closed;
  }, 180_000);

  it('prints the banner on stdout and the request log on stderr', async () => {
    const child = startServe(`sqlite:${join(dir, 'logs.db')}`, 'info');
    const out = watch(child);
    const log = watch(child, 'stderr');
    const [, key] = await out.waitFor(/\s(wrn_api_[0-9A-Za-z]+)\s/);
    const [, url] = await out.waitFor(/serving on (http:\/\/[0-9.:]+)/);
    expect((await fetch(`${url}/v1/network`, { headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    await log.waitFor(/"path":"\/v1\/network"/);
    const closed = new Promise((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    await closed;
    // stdout holds only what the command is for: no JSON log lines
    const seen = `stdout:\n${out.output()}\nstderr:\n${log.output()}`;
    const jsonLines = (text: string) => text.split('\n').filter((line) => line.startsWith('{'));
    expect(jsonLines(out.output()), seen).toEqual([]);
    const lines = jsonLines(log.output());
    expect(lines.length, seen).toBeGreaterThan(0);
    for (const line of lines) expect(line, seen).toMatch(/^\{"level":\d+,/);
    expect(log.output(), seen).not.toContain(key);
  });
});

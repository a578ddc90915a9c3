import {
  addDevice,
  apiKey,
  entry,
  json,
  report,
  startServer,
  type TestDevice,
  type TestServer,
} from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../src/main.js';

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

async function warren(args: string[], env: Record<string, string>): Promise<Result> {
  const result = { code: 0, stdout: '', stderr: '' };
  result.code = await run(args, {
    out: (text) => {
      result.stdout += text;
    },
    err: (text) => {
      result.stderr += text;
    },
    env,
  });
  return result;
}

describe('warren logs', () => {
  let server: TestServer;
  let env: Record<string, string>;
  let a: TestDevice;
  let b: TestDevice;

  beforeAll(async () => {
    server = await startServer();
    env = { WARREN_URL: server.url, WARREN_API_KEY: server.apiKey };
    a = await addDevice(server);
    b = await addDevice(server);
    await report(server, a, [entry(a, b, { txBytes: 1200, rxBytes: 56_000 }), entry(a, '10.0.0.5:5432')]);
    await report(server, b, [entry(b, a)]);
  });
  afterAll(() => server.close());

  it('prints connections as aligned columns, oldest first', async () => {
    const result = await warren(['logs', 'connections', '--since', '24h'], env);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^LOGGED\s+START\s+PROTO\s+SOURCE\s+DESTINATION\s+SENT\s+RECEIVED$/);
    expect(lines).toHaveLength(4);
    expect(lines[1]).toContain(`${a.ipv4}:`);
    expect(lines[1]).toContain('1.2 kB');
    expect(lines[1]).toContain('56 kB');
    expect(lines[2]).toContain('10.0.0.5:5432');
    const column = (line: string) => line.indexOf('tcp');
    expect(new Set(lines.slice(1).map(column)).size).toBe(1);
    expect(lines[0]?.indexOf('PROTO')).toBe(column(lines[1] as string));
  });

  it('prints JSON lines with --json, honours --limit and --device', async () => {
    const all = await warren(['logs', 'connections', '--json'], env);
    const entries = all.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(entries.map((e) => e.reportedBy)).toEqual([a.id, a.id, b.id]);
    const two = await warren(['logs', 'connections', '--json', '--limit', '2'], env);
    expect(two.stdout.trimEnd().split('\n')).toHaveLength(2);
    const toB = await warren(['logs', 'connections', '--json', '--device', b.id], env);
    expect(
      toB.stdout
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).id),
    ).toEqual([entries[0].id, entries[2].id]);
  });

  it('follows the log: prints what arrives later, and stops at --limit', async () => {
    // Report only once the follower has read its first page, so the two entries can only
    // reach it by tailing (a fixed sleep let a slow start read them in that first page).
    const reads = async () =>
      (await json(await server.call('GET', '/v1/logs/audit?since=1h&limit=1000'))).entries.filter(
        (e: { path: string }) => e.path === '/v1/logs/connections',
      ).length;
    const before = await reads();
    const following = warren(['logs', 'connections', '--follow', '--json', '--interval', '0.05', '--limit', '5'], env);
    for (let i = 0; (await reads()) === before; i++) {
      if (i > 200) throw new Error('the follower never read the log');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await report(server, b, [entry(b, a, { txBytes: 777 }), entry(b, a, { txBytes: 778 })]);
    const result = await following;
    expect(result.code).toBe(0);
    const lines = result.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((e) => e.txBytes).slice(3)).toEqual([777, 778]);
  });

  it('prints the audit log, filtered by key', async () => {
    const key = await apiKey(server, ['read']);
    const keyEnv = { ...env, WARREN_API_KEY: key };
    await warren(['logs', 'connections', '--limit', '1'], keyEnv);
    const list = await warren(['logs', 'audit', '--json'], env);
    const calls = list.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    const readKey = calls.find((c) => c.path === '/v1/logs/connections' && c.keyId !== calls[0].keyId);
    expect(readKey).toBeDefined();
    const only = await warren(['logs', 'audit', '--json', '--key', readKey.keyId], env);
    const mine = only.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((c) => c.keyId === readKey.keyId)).toBe(true);
    const table = await warren(['logs', 'audit'], env);
    expect(table.stdout.split('\n')[0]).toMatch(/^TIME\s+CALLER\s+METHOD\s+PATH\s+STATUS\s+CHANGE\s+CLIENT$/);
  });

  it('says so when nothing matches, and refuses bad flags with exit code 2', async () => {
    server.clock.advance(60_000);
    const none = await warren(['logs', 'connections', '--since', '1s'], env);
    expect(none).toMatchObject({ code: 0, stdout: '' });
    expect(none.stderr).toContain('no connections');
    expect((await warren(['logs', 'connections', '--since', '1w'], env)).code).toBe(2);
    expect((await warren(['logs', 'connections', '--limit', '0'], env)).code).toBe(2);
    expect((await warren(['logs', 'audit', '--key', 'deploy-bot'], env)).code).toBe(2);
    expect((await warren(['logs', 'connections'], { WARREN_URL: server.url })).code).toBe(2);
    const wrongKey = await warren(['logs', 'connections'], { ...env, WARREN_API_KEY: 'wrn_api_nope' });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/unauthenticated/);
  });
});

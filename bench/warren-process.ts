// `warren serve` as a child process, the way users run it: shared by the benchmarks that load
// the server from outside (api, soak).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { join } from 'node:path';

/**
 * The `warren` command the benchmarks serve: this checkout's build, or WARREN_BENCH_BIN (another
 * build's `bin/warren.js`, e.g. a copy of the build before a change, for comparing the two).
 */
const warrenBin =
  process.env.WARREN_BENCH_BIN ?? join(import.meta.dirname, '..', 'packages', 'cli', 'bin', 'warren.js');

export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

/** `warren init`: creates the schema and a network; returns its first API key. */
export function initWarren(db: string): string {
  const init = JSON.parse(
    execFileSync(process.execPath, [warrenBin, 'init', '--db', db, '--network', 'bench', '--json'], {
      encoding: 'utf8',
    }),
  ) as { apiKey: string };
  return init.apiKey;
}

/**
 * Arguments for node in every `warren serve` a benchmark starts, from WARREN_BENCH_NODE_ARGS
 * (split on spaces): `WARREN_BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/profiles"` writes a
 * CPU profile of each server when it stops (a whole run's; the reads benchmark's `--profile`
 * profiles each call's window alone).
 */
function benchNodeArgs(): string[] {
  return (process.env.WARREN_BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
}

/**
 * Starts `warren serve` on a free loopback port and waits until it is ready. Its request log
 * (the default level, as users run it) is written and discarded. `nodeArgs` go to node before
 * the script (e.g. `--import` of a probe), after WARREN_BENCH_NODE_ARGS; `env` is added to the
 * environment.
 */
export async function serveWarren(
  db: string,
  options: { nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      ...benchNodeArgs(),
      ...(options.nodeArgs ?? []),
      warrenBin,
      'serve',
      '--db',
      db,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
    ],
    { stdio: ['ignore', 'ignore', 'ignore'], env: { ...process.env, ...options.env } },
  );
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    const ready = await fetch(`${url}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) return { url, child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGTERM');
  throw new Error('warren serve did not become ready');
}

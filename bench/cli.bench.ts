// CLI benchmark: `npm run bench -- cli [--runs 9]`.
//
// What a script pays for each `warren` it runs: wall time (spawn to exit) and peak memory (the
// process's max RSS, reported at exit), median of --runs runs, for `warren --help` and
// `warren devices list` against a running server, next to `node -e 0` measured the same way in
// the same run (the floor: Node starting and exiting); and `warren serve` on an empty SQLite file,
// from spawn to its first 200 on /readyz. The command is the build bin/warren.js runs, brought up
// to date first. Targets: help and devices list under 150 ms and 60 MiB, serve ready under 1 s.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { freePort, initWarren, serveWarren } from './warren-process.ts';

const { values } = parseArgs({ options: { runs: { type: 'string' } } });
const RUNS = Number(values.runs ?? 9);
const root = join(import.meta.dirname, '..');
const warrenBin = join(root, 'packages', 'cli', 'bin', 'warren.js');
// Prints the peak RSS on fd 3 when the process exits; loaded into every measured process alike.
const RSS_PROBE = `data:text/javascript,import { writeSync } from 'node:fs'; process.on('exit', () => writeSync(3, String(process.resourceUsage().maxRSS)));`;

execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });

const median = (xs: number[]) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
};

/** One run: wall milliseconds and peak RSS in MiB. */
function once(args: string[], env: NodeJS.ProcessEnv): { ms: number; mib: number } {
  const started = performance.now();
  const result = spawnSync(process.execPath, ['--import', RSS_PROBE, ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  const ms = performance.now() - started;
  if (result.status !== 0) throw new Error(`node ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  const rss = Number(result.output[3]?.toString());
  return { ms, mib: rss / 1024 };
}

function measure(label: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  once(args, env); // warm the file cache
  const runs = Array.from({ length: RUNS }, () => once(args, env));
  return { label, ms: median(runs.map((r) => r.ms)), mib: median(runs.map((r) => r.mib)) };
}

async function serveReadyMs(dir: string, run: number): Promise<number> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/readyz`;
  const db = `sqlite:${join(dir, `empty-${run}.db`)}`;
  const started = performance.now();
  const child = spawn(process.execPath, [warrenBin, 'serve', '--db', db, '--port', String(port)], {
    stdio: 'ignore',
    env: { ...process.env, WARREN_LOG_LEVEL: 'warn' },
  });
  try {
    for (;;) {
      const ok = await fetch(url).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (child.exitCode !== null) throw new Error(`warren serve exited ${child.exitCode}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGTERM');
    await closed;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'warren-bench-cli-'));
try {
  const db = `sqlite:${join(dir, 'warren.db')}`;
  const apiKey = initWarren(db);
  const server = await serveWarren(db);
  try {
    const env = { ...process.env, WARREN_URL: server.url, WARREN_API_KEY: apiKey };
    const rows = [
      measure('node -e 0 (floor)', ['-e', '0']),
      measure('warren --help', [warrenBin, '--help']),
      measure('warren devices list', [warrenBin, 'devices', 'list'], env),
    ];
    const floor = rows[0] as { ms: number; mib: number };
    console.log(`median of ${RUNS} runs, Node ${process.version}`);
    console.log('command                      wall ms   × floor   max RSS MiB   × floor');
    for (const row of rows) {
      console.log(
        `${row.label.padEnd(28)} ${row.ms.toFixed(1).padStart(7)}   ${(row.ms / floor.ms).toFixed(2).padStart(7)}` +
          `   ${row.mib.toFixed(1).padStart(11)}   ${(row.mib / floor.mib).toFixed(2).padStart(7)}`,
      );
    }
  } finally {
    server.child.kill('SIGTERM');
  }
  const ready: number[] = [];
  for (let run = 0; run < Math.min(RUNS, 5); run++) ready.push(await serveReadyMs(dir, run));
  console.log(
    `warren serve on an empty SQLite file, spawn to /readyz: median ${median(ready).toFixed(0)} ms of ${ready.length}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}

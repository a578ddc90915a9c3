// Loading a server from outside with wrk, and the raw node:http baseline it is compared with:
// shared by the benchmarks that report a ratio to raw serving (api, reads).
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const tsx = join(import.meta.dirname, '..', 'node_modules', '.bin', 'tsx');

export interface Load {
  rps: number;
  /** Requests wrk completed in the run. */
  requests: number;
  p50: number;
  p99: number;
  errors: number;
}

/** Exits with a hint when wrk is missing (wrk prints its version and exits 1: only ENOENT counts). */
export function requireWrk(benchmark: string): void {
  try {
    execFileSync('wrk', ['--version'], { stdio: 'ignore' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      console.error(`the ${benchmark} benchmark needs wrk (Debian: apt-get install wrk)`);
      process.exit(1);
    }
  }
}

/**
 * Runs wrk against one URL and reads its throughput, latency percentiles and non-2xx count.
 * Asynchronously: a simulated fleet's heartbeats go on meanwhile.
 */
export async function wrk(
  url: string,
  apiKey: string,
  options: { threads: number; connections: number; seconds: number },
): Promise<Load> {
  const { stdout: out } = await promisify(execFile)(
    'wrk',
    [
      `-t${options.threads}`,
      `-c${options.connections}`,
      `-d${options.seconds}s`,
      '--latency',
      '-H',
      `Authorization: Bearer ${apiKey}`,
      url,
    ],
    { encoding: 'utf8' },
  );
  const ms = (label: string): number => {
    const match = out.match(new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm'));
    if (!match) return Number.NaN;
    const value = Number(match[1]);
    return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
  };
  const errors = Number(out.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const socketErrors = out.match(/Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/);
  const socket = socketErrors ? socketErrors.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0;
  const rps = Number(out.match(/Requests\/sec:\s+([\d.]+)/)?.[1]);
  if (!(rps > 0) || errors + socket > 0) console.error(`wrk at ${url}:\n${out}`);
  const requests = Number(out.match(/(\d+) requests in/)?.[1] ?? 0);
  return { rps, requests, p50: ms('50%'), p99: ms('99%'), errors: errors + socket };
}

/** The baseline server (bench/raw-server.ts) in its own process, answering with Warren's bytes. */
export async function rawServer(
  dir: string,
  apiKey: string,
  bodies: Map<string, Buffer>,
): Promise<{ url: string; child: ChildProcess }> {
  const file = join(dir, 'raw-bodies.json');
  writeFileSync(
    file,
    JSON.stringify({ apiKey, bodies: Object.fromEntries([...bodies].map(([p, b]) => [p, b.toString()])) }),
  );
  const child = spawn(tsx, [join(import.meta.dirname, 'raw-server.ts'), file], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve(chunk.toString().trim()));
    child.once('exit', (code) => reject(new Error(`raw server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

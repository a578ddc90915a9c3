// Loading a server from outside with wrk, and the raw node:http baseline it is compared with:
// shared by the benchmarks that report a ratio to raw serving (api, reads).
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
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

/** Clock ticks per second of /proc's CPU times (Linux's USER_HZ, 100 on every common build). */
const TICKS_PER_S = 100;

/** CPU time in µs, user and system apart. */
export interface CpuTime {
  userUs: number;
  systemUs: number;
}

/** Fields 14 and 15 of /proc/<pid>/stat (after the command's parenthesised name): user and system ticks. */
function processTicks(pid: number): [number, number] {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(fields[11]), Number(fields[12])];
  } catch {
    return [0, 0];
  }
}

/**
 * The CPU time a process and its descendants have used so far, every thread included, from
 * /proc (Linux; zero elsewhere). A server run through `tsx` is a child of the process spawned,
 * so the tree is what counts; it is read from the parent pointers of /proc. System time holds
 * the kernel's share of loopback TCP, which lands on whichever process runs when a packet is
 * processed: on a shared machine it varies between runs far more than user time does.
 */
export function treeCpuUs(root: number): CpuTime {
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return { userUs: 0, systemUs: 0 };
  }
  const children = new Map<number, number[]>();
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(name));
      children.set(parent, list);
    } catch {
      // Gone meanwhile.
    }
  }
  let user = 0;
  let system = 0;
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop()!;
    const [u, s] = processTicks(pid);
    user += u;
    system += s;
    pending.push(...(children.get(pid) ?? []));
  }
  return { userUs: (user * 1_000_000) / TICKS_PER_S, systemUs: (system * 1_000_000) / TICKS_PER_S };
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

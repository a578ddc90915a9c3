/**
 * The pieces of the end-to-end suite: a `warren serve --derp` and several official
 * `tailscaled` (userspace networking, each with its own state directory and socket), all inside
 * the network namespace netns.sh made, where 192.0.2.1 and 192.0.2.2 are the two ends of a
 * veth pair. Every wait is bounded: a check that does not hold in time fails with what it saw.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { LogFront } from './log-front.ts';

const run = promisify(execFile);

export const HOST = '192.0.2.1';
export const PORT = 8080;
/** Where devices reach the server, and so the embedded relay in their DERP map. */
export const PUBLIC_URL = `http://${HOST}:${PORT}`;
/**
 * The login server the clients use. A client falls back to HTTPS on port 443 when it dials an
 * http:// login server again within two minutes, unless the host is loopback or private, so
 * the suite logs in over loopback (docs/TAILSCALE.md); relay traffic uses the veth address.
 */
export const SERVER_URL = `http://127.0.0.1:${PORT}`;
export const BIN = process.env.TAILSCALE_BIN ?? '';
const ROOT = join(import.meta.dirname, '..', '..');

export const work = mkdtempSync(join(tmpdir(), 'warren-tailscale-'));
const children: ChildProcess[] = [];

export function stopAll(): void {
  for (const child of children.reverse()) if (child.exitCode === null) child.kill('SIGTERM');
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns a value other than undefined, for at most `ms`. */
export async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms${last ? ` (last error: ${last})` : ''}`);
    await sleep(200);
  }
}

export interface Warren {
  apiKey: string;
  /** The database `warren serve` runs on, for operator commands (`warren console login`). */
  db: string;
  /** Where this instance serves. */
  url: string;
  child: ChildProcess;
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    contentType?: string,
  ): Promise<{ status: number; body: T }>;
}

export interface WarrenOptions {
  /** Default: a SQLite file in the work directory. */
  db?: string;
  port?: number;
  /** The embedded relay (default on), and its STUN responder on UDP 3478 (default on: one instance may hold it). */
  derp?: boolean;
  stun?: boolean;
  /** An instance joining a database another one set up prints no key: give it that one's. */
  apiKey?: string;
}

export async function startWarren(options: WarrenOptions = {}): Promise<Warren> {
  const port = options.port ?? PORT;
  const url = `http://127.0.0.1:${port}`;
  const out = join(work, `warren-${port}.out`);
  const db = options.db ?? `sqlite:${join(work, 'warren.db')}`;
  const child = spawn(
    process.execPath,
    [
      join(ROOT, 'packages/cli/bin/warren.js'),
      'serve',
      ...(options.derp === false ? [] : ['--derp']),
      '--host',
      '0.0.0.0',
      '--port',
      String(port),
    ],
    {
      env: {
        ...process.env,
        WARREN_DB: db,
        WARREN_LOG_LEVEL: 'warn',
        WARREN_PUBLIC_URL: port === PORT ? PUBLIC_URL : `http://${HOST}:${port}`,
        ...(options.stun === false && { WARREN_DERP_STUN_PORT: 'off' }),
      },
      stdio: ['ignore', openSync(out, 'w'), openSync(join(work, `warren-${port}.err`), 'w')],
    },
  );
  children.push(child);
  const apiKey =
    options.apiKey ??
    (await until('warren serve prints its first API key', 60_000, async () => {
      return /wrn_api_[A-Za-z0-9_]+/.exec(readFileSync(out, 'utf8'))?.[0];
    }));
  await until('GET /key answers', 30_000, async () => ((await fetch(`${url}/key?v=142`)).ok ? true : undefined));
  return {
    apiKey,
    db,
    url,
    child,
    async call(method, path, body, contentType = 'application/json') {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${apiKey}`, ...(body !== undefined && { 'content-type': contentType }) },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      return { status: res.status, body: text ? JSON.parse(text) : undefined };
    },
  };
}

export interface Client {
  name: string;
  /** The daemon's socket, for a `tailscale` command left running (`tailscale up` waiting to log in). */
  socketPath: string;
  /**
   * Runs the tailscale CLI against this daemon, for at most `ms`. Its configuration directory
   * (where `tailscale ssh` writes the known hosts it hands to ssh) is the client's own.
   */
  cli(args: string[], ms?: number): Promise<{ code: number; stdout: string; stderr: string }>;
  /** The same left running (a command that waits for a person): what it printed so far, its exit. */
  spawnCli(args: string[]): { output(): string; exited: Promise<number>; stop(): void };
  status(): Promise<Status>;
}

export interface PeerStatus {
  /** The Warren device id (StableID). */
  ID: string;
  HostName: string;
  DNSName: string;
  TailscaleIPs: string[];
  AllowedIPs?: string[];
  PrimaryRoutes?: string[];
  Tags?: string[];
  Online: boolean;
  /** The home DERP region's code. */
  Relay?: string;
}

export interface Status {
  BackendState: string;
  Self: PeerStatus;
  Peer?: Record<string, PeerStatus>;
}

export interface ClientOptions {
  /**
   * Runs the client with its logs on, uploading through this front (log-front.ts), as a network
   * with `flowLogs` needs. Otherwise it runs with `TS_NO_LOGS_NO_SUPPORT` and uploads nothing.
   */
  logs?: LogFront;
  /**
   * Runs tailscaled with `--state=mem:`, as Tailscale's container image does without a state
   * directory: nothing is kept, and the client registers as ephemeral.
   */
  memoryState?: boolean;
}

export async function startClient(name: string, options: ClientOptions = {}): Promise<Client> {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  const socket = join(dir, 'tailscaled.sock');
  const child = spawn(
    join(BIN, 'tailscaled'),
    [
      '--tun=userspace-networking',
      `--statedir=${dir}`,
      ...(options.memoryState ? ['--state=mem:'] : []),
      `--socket=${socket}`,
      '--port=0',
    ],
    {
      // The embedded relay is plain HTTP here; production relays sit behind TLS.
      env: {
        ...process.env,
        TS_DEBUG_USE_DERP_HTTP: '1',
        TS_LOGS_DIR: dir,
        ...(options.logs
          ? {
              HTTPS_PROXY: options.logs.proxyUrl,
              // The control server and the relay are dialled directly, as on a network whose
              // proxy is only there for the log host.
              NO_PROXY: `127.0.0.1,localhost,${HOST}`,
              SSL_CERT_FILE: options.logs.caFile,
            }
          : { TS_NO_LOGS_NO_SUPPORT: 'true' }),
      },
      stdio: ['ignore', 'ignore', openSync(join(dir, 'tailscaled.log'), 'w')],
    },
  );
  children.push(child);
  const cli: Client['cli'] = async (args, ms = 15_000) => {
    try {
      const { stdout, stderr } = await run(join(BIN, 'tailscale'), [`--socket=${socket}`, ...args], {
        timeout: ms,
        env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config') },
      });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code?: number; stdout?: string; stderr?: string };
      return {
        code: typeof e.code === 'number' ? e.code : 1,
        stdout: e.stdout ?? '',
        stderr: e.stderr ?? String(error),
      };
    }
  };
  const spawnCli: Client['spawnCli'] = (args) => {
    let output = '';
    const run = spawn(join(BIN, 'tailscale'), [`--socket=${socket}`, ...args], {
      env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config') },
    });
    children.push(run);
    run.stdout.on('data', (d) => (output += d));
    run.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number>((resolve) => run.once('exit', (code) => resolve(code ?? 1)));
    return { output: () => output, exited, stop: () => run.kill('SIGTERM') };
  };
  await until(`${name}: tailscaled answers`, 30_000, async () =>
    (await cli(['version'], 5_000)).code === 0 ? true : undefined,
  );
  return {
    name,
    socketPath: socket,
    cli,
    spawnCli,
    async status() {
      const res = await cli(['status', '--json'], 10_000);
      if (res.code !== 0) throw new Error(`${name}: tailscale status: ${res.stderr}`);
      return JSON.parse(res.stdout) as Status;
    },
  };
}

/** The one-time sign-in link of `login` an operator hands out (`warren console login`), on `url`. */
export async function signInLink(warren: Warren, login: string, url = warren.url): Promise<string> {
  const { stdout } = await run(process.execPath, [
    join(ROOT, 'packages/cli/bin/warren.js'),
    'console',
    'login',
    '--network',
    'default',
    '--user',
    login,
    '--db',
    warren.db,
    '--url',
    url,
    '--json',
  ]);
  return JSON.parse(stdout).url;
}

/** A console session of `login` through its one-time link: its cookie and CSRF token. */
export async function consoleSession(warren: Warren, login: string): Promise<{ cookie: string; csrf: string }> {
  const res = await fetch(await signInLink(warren, login), { redirect: 'manual' });
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return { cookie, csrf: res.headers.get('x-csrf-token') ?? '' };
}

/** Joins with an auth key; the client reaches Running. */
export async function joinNetwork(
  client: Client,
  authKey: string,
  extra: string[] = [],
  loginServer = SERVER_URL,
): Promise<void> {
  const res = await client.cli(
    [
      'up',
      `--login-server=${loginServer}`,
      `--auth-key=${authKey}`,
      `--hostname=${client.name}`,
      '--timeout=60s',
      ...extra,
    ],
    70_000,
  );
  if (res.code !== 0) throw new Error(`${client.name}: tailscale up failed (${res.code}): ${res.stderr}`);
}

export const peers = (status: Status): PeerStatus[] => Object.values(status.Peer ?? {});

/**
 * Whether `tailscale nc` from `client` to `target:port` connects: the listeners answer with a
 * banner at once, and a connection the peer's packet filter drops hangs, so it is bounded.
 */
export async function connects(client: Client, target: string, port: number, ms = 3_000): Promise<boolean> {
  const res = await client.cli(['nc', target, String(port)], ms);
  return res.stdout.includes(`port ${port}`);
}

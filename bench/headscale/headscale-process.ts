// Headscale (`headscale serve`, built by build.sh) as a child process beside the Tailscale
// fleet benchmark: a temporary directory with a generated configuration (SQLite with its
// write-ahead log, loopback listeners on free ports, the policy kept in the database so that
// `PUT /api/v1/policy` — what `headscale policy set` calls — is the live path), a user and an
// API key made with its own CLI, and its REST API for everything the benchmark changes.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../warren-process.js';

export interface HeadscaleProcess {
  /** The Tailscale control endpoint and the REST API. */
  url: string;
  child: ChildProcess;
  /** Runs the headscale CLI against this server (over its unix socket); its stdout. */
  cli(args: string[]): string;
  /** A call to the REST API with the process's API key; the parsed answer. */
  api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

function config(dir: string, port: number, metricsPort: number, grpcPort: number): string {
  // Headscale refuses an empty DERP map; this region is never dialled (the simulated devices
  // send no packets), as Warren's relay settings are not either.
  writeFileSync(
    join(dir, 'derp.yaml'),
    [
      'regions:',
      '  900:',
      '    regionid: 900',
      '    regioncode: loopback',
      '    regionname: Loopback',
      '    nodes:',
      '      - name: 900a',
      '        regionid: 900',
      '        hostname: 127.0.0.1',
      '        ipv4: 127.0.0.1',
      '        stunport: -1',
      '        derpport: 1',
      '',
    ].join('\n'),
  );
  return [
    `server_url: http://127.0.0.1:${port}`,
    `listen_addr: 127.0.0.1:${port}`,
    `metrics_listen_addr: 127.0.0.1:${metricsPort}`,
    `grpc_listen_addr: 127.0.0.1:${grpcPort}`,
    'grpc_allow_insecure: false',
    'disable_check_updates: true',
    'noise:',
    `  private_key_path: ${join(dir, 'noise_private.key')}`,
    'prefixes:',
    '  v4: 100.64.0.0/10',
    '  v6: fd7a:115c:a1e0::/48',
    '  allocation: sequential',
    'derp:',
    '  server:',
    '    enabled: false',
    '  urls: []',
    `  paths: [${join(dir, 'derp.yaml')}]`,
    '  auto_update_enabled: false',
    'database:',
    '  type: sqlite',
    '  sqlite:',
    `    path: ${join(dir, 'db.sqlite')}`,
    // What its configuration example recommends for production (and its defaults).
    '    write_ahead_log: true',
    '    wal_autocheckpoint: 1000',
    'policy:',
    '  mode: database',
    'dns:',
    '  magic_dns: true',
    '  base_domain: bench.internal',
    '  override_local_dns: false',
    `unix_socket: ${join(dir, 'headscale.sock')}`,
    'unix_socket_permission: "0770"',
    '',
  ].join('\n');
}

/** Starts `headscale serve` and waits until it answers; creates `user` and an API key. */
export async function startHeadscale(bin: string, user: string): Promise<HeadscaleProcess> {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-headscale-'));
  const configPath = join(dir, 'config.yaml');
  const port = await freePort();
  writeFileSync(configPath, config(dir, port, await freePort(), await freePort()));
  // Its log at the default level, written and discarded, as `warren serve`'s is.
  const child = spawn(bin, ['-c', configPath, 'serve'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString('utf8')).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  let ready = false;
  for (let i = 0; i < 300 && !ready && child.exitCode === null; i++) {
    ready = await fetch(`${url}/health`).then(
      (r) => r.ok,
      () => false,
    );
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!ready) {
    await stop();
    throw new Error(`headscale serve did not become ready: ${stderr.trim().slice(-1000)}`);
  }
  const cli = (args: string[]) =>
    execFileSync(bin, ['-c', configPath, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    cli(['users', 'create', user]);
    const apiKey = cli(['apikeys', 'create', '--expiration', '1d']).trim().split('\n').pop() ?? '';
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`headscale ${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
      return (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    };
    return { url, child, cli, api, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/**
 * `warren node up` and `warren node simulate`: one device agent for this machine, or many
 * simulated ones in this process (the agent itself is in node/agent.ts, the fleet in node/fleet-simulator.ts).
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { hostname as osHostname } from 'node:os';
import { dirname } from 'node:path';
import type { DeviceBody } from '@warren/contract';
import type { Command } from 'commander';
import { Agent, isStatus, message, newNodeKey } from '../node/agent.js';
import { simulate } from '../node/fleet-simulator.js';
import { simulateTailscale } from '../node/tailscale-simulator.js';
import { DEFAULT_URL, examples, type Io, positiveInteger, serverAddress, UsageError, visible } from './output.js';

export { Agent, type AgentOptions } from '../node/agent.js';
export { type SimulateOptions, type Simulation, simulate } from '../node/fleet-simulator.js';

interface State {
  server: string;
  nodeKey: string;
  privateKey?: string;
  nodeToken: string;
  device: { id: string; name: string; addresses: string[] };
}

function readState(path: string): State | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as State;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the state file ${path}: ${message(error)}`);
  }
}

/** Written atomically and readable only by its owner: it holds the node credential. */
function writeState(path: string, state: State): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}

export interface UpOptions {
  server: string;
  authKey?: string;
  hostname: string;
  advertiseRoutes?: string[];
  stateFile?: string;
  heartbeatMs?: [number, number];
  fetch?: typeof fetch;
}

/**
 * One agent until `signal` aborts: resumes with the state file's credential when the server
 * still accepts it, else enrolls (re-enrolling the same device when the state file has its
 * node key). Resolves after disconnecting; rejects when the server drops the device.
 */
export async function nodeUp(options: UpOptions, io: Io, signal: AbortSignal): Promise<void> {
  const saved = options.stateFile ? readState(options.stateFile) : undefined;
  const keys = saved ? { nodeKey: saved.nodeKey, privateKey: saved.privateKey } : newNodeKey();
  const agent = new Agent({
    server: options.server,
    hostname: options.hostname,
    nodeKey: keys.nodeKey,
    nodeToken: saved?.server === options.server ? saved.nodeToken : undefined,
    advertiseRoutes: options.advertiseRoutes,
    heartbeatMs: options.heartbeatMs,
    log: (line) => io.err(`warren node: ${line}\n`),
    fetch: options.fetch,
  });
  let device = saved?.device;
  let resumed = false;
  if (agent.client.nodeToken) {
    try {
      const { advertiseRoutes } = options;
      await agent.client.heartbeat(advertiseRoutes ? { advertiseRoutes } : {}, { signal });
      resumed = true;
    } catch (error) {
      if (!isStatus(error, 401)) throw error;
      agent.client.nodeToken = undefined;
    }
  }
  if (!resumed) {
    if (!options.authKey) throw new UsageError('--auth-key (or WARREN_AUTH_KEY) is needed to enroll this device');
    let result: Awaited<ReturnType<Agent['enroll']>>;
    try {
      result = await agent.enroll(options.authKey, signal);
    } catch (error) {
      // Ctrl-C while enrolling: stop quietly, as after enrollment.
      if (signal.aborted) return;
      throw error;
    }
    device = { id: result.device.id, name: result.device.name, addresses: result.device.addresses ?? [] };
    if (options.stateFile) {
      writeState(options.stateFile, { server: options.server, ...keys, nodeToken: result.nodeToken, device });
    }
  }
  agent.device ??= device ? ({ ...device } as DeviceBody) : undefined;
  io.out(
    `${resumed ? 'resumed' : 'enrolled'} as ${visible(device?.name ?? '')} (${device?.id}), addresses ${device?.addresses.join(', ')}\n`,
  );
  const gone = new Promise<never>((_, reject) => {
    agent.onGone = (error) => reject(new Error(`the server no longer accepts this device: ${error.detail}`));
  });
  agent.start();
  const stopped = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
  let disconnected = true;
  try {
    await Promise.race([stopped, gone]);
  } finally {
    // Bounded by the request timeout; a second Ctrl-C exits without waiting (see untilSignal).
    await agent.stop().catch((error) => {
      disconnected = false;
      io.err(
        `warren node: disconnect failed: ${message(error)}; the server shows ${device?.name} offline 60 s after its last heartbeat\n`,
      );
    });
  }
  if (disconnected) io.out(`disconnected ${visible(device?.name ?? '')}\n`);
}

/** Most distinct reasons printed; the rest are counted in one line. */
const MAX_REASONS = 10;

/** Why enrollments failed, one line per distinct reason, most frequent first, on stderr. */
export function printReasons(io: Io, reasons: Record<string, number>): void {
  const sorted = Object.entries(reasons).sort(([a, x], [b, y]) => y - x || a.localeCompare(b));
  for (const [reason, n] of sorted.slice(0, MAX_REASONS)) io.err(`  ${n} × ${visible(reason)}\n`);
  const rest = sorted.slice(MAX_REASONS);
  if (rest.length > 0) {
    const n = rest.reduce((sum, [, count]) => sum + count, 0);
    io.err(`  ${n} × for ${rest.length} other reasons\n`);
  }
}

function serverUrl(flag: string | undefined, io: Io): string {
  return serverAddress(
    flag === undefined ? 'WARREN_URL' : '--server',
    (flag ?? io.env.WARREN_URL)?.trim() || DEFAULT_URL,
  );
}

const routesOf = (text: string | undefined) =>
  text
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * An AbortSignal that fires on SIGINT or SIGTERM (and after `seconds`, when given): the
 * command then stops its devices and disconnects them. A SIGINT or SIGTERM after that exits at
 * once with 130, for whoever does not want to wait for the disconnects. `release` removes the
 * handlers when the command ends, so later signals get Node's default handling again instead
 * of being swallowed.
 */
function untilSignal(io: Io, seconds?: number): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const onSignal = () => {
    if (!controller.signal.aborted) return controller.abort();
    io.err('warren node: exiting without waiting for devices to disconnect\n');
    process.exit(130);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const timer = seconds ? setTimeout(() => controller.abort(), seconds * 1000) : undefined;
  return {
    signal: controller.signal,
    release: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      clearTimeout(timer);
    },
  };
}

export function registerNodeCommands(program: Command, io: Io): void {
  const node = program.command('node').description('device agents: enroll, heartbeat, follow the netmap');

  node
    .command('up')
    .description('enroll this machine and keep it online until Ctrl-C (then disconnect)')
    .option('--server <url>', 'the Warren server (env WARREN_URL)')
    .option('--auth-key <key>', 'auth key to enroll with (env WARREN_AUTH_KEY)')
    .option('--hostname <name>', 'hostname to register', osHostname())
    .option('--advertise-routes <cidrs>', 'subnet routes to offer, comma-separated (10.0.0.0/24,…)')
    .option('--state-file <path>', 'keep the node key and credential here, to resume after a restart')
    .addHelpText('after', examples(['warren node up --auth-key wrn_auth_… --advertise-routes 10.0.0.0/24']))
    .action(
      async (flags: {
        server?: string;
        authKey?: string;
        hostname: string;
        advertiseRoutes?: string;
        stateFile?: string;
      }) => {
        const { signal, release } = untilSignal(io);
        try {
          await nodeUp(
            {
              server: serverUrl(flags.server, io),
              authKey: flags.authKey ?? io.env.WARREN_AUTH_KEY,
              hostname: flags.hostname,
              advertiseRoutes: routesOf(flags.advertiseRoutes),
              stateFile: flags.stateFile,
            },
            io,
            signal,
          );
        } finally {
          release();
        }
      },
    );

  node
    .command('simulate')
    .description('run N simulated devices in this process (demos and load); Ctrl-C stops them')
    .requiredOption('--count <n>', 'how many devices')
    .option('--auth-key <key>', 'a reusable auth key (env WARREN_AUTH_KEY)')
    .option('--server <url>', 'the Warren server (env WARREN_URL)')
    .option('--concurrency <n>', 'enrollments (and disconnects) in flight at once', '32')
    .option('--netmap-concurrency <n>', 'netmap fetches in flight at once across all devices', '4')
    .option('--advertise-routes <cidrs>', 'subnet routes every device offers, comma-separated')
    .option('--hostname-prefix <prefix>', 'hostnames are <prefix>-1 … <prefix>-N', 'sim')
    .option('--no-netmap', 'do not follow the netmap')
    .option('--no-connections', 'do not report synthetic connections')
    .option('--duration <seconds>', 'stop after this many seconds instead of waiting for Ctrl-C')
    .option(
      '--protocol <protocol>',
      "native (Warren's agent) or tailscale (Noise, HTTP/2, register and a map stream each, as tailscaled)",
      'native',
    )
    .addHelpText(
      'after',
      examples([
        'warren node simulate --count 1000 --auth-key wrn_auth_… --no-connections',
        'warren node simulate --protocol tailscale --count 1000 --auth-key wrn_auth_…',
      ]),
    )
    .action(
      async (flags: {
        count: string;
        authKey?: string;
        server?: string;
        concurrency: string;
        netmapConcurrency: string;
        advertiseRoutes?: string;
        hostnamePrefix: string;
        netmap: boolean;
        connections: boolean;
        duration?: string;
        protocol: string;
      }) => {
        const authKey = flags.authKey ?? io.env.WARREN_AUTH_KEY;
        if (!authKey) throw new UsageError('--auth-key (or WARREN_AUTH_KEY) is required');
        const count = positiveInteger('--count', flags.count);
        const duration = flags.duration === undefined ? undefined : positiveInteger('--duration', flags.duration);
        const concurrency = positiveInteger('--concurrency', flags.concurrency);
        if (flags.protocol !== 'native' && flags.protocol !== 'tailscale')
          throw new UsageError(`--protocol must be native or tailscale, not "${flags.protocol}"`);
        if (flags.protocol === 'tailscale') {
          if (flags.advertiseRoutes) throw new UsageError('--advertise-routes is for --protocol native only');
          await simulateTailscaleFleet(io, {
            server: serverUrl(flags.server, io),
            authKey,
            count,
            concurrency,
            hostnamePrefix: flags.hostnamePrefix,
            duration,
          });
          return;
        }
        const netmapConcurrency = positiveInteger('--netmap-concurrency', flags.netmapConcurrency);
        const { signal, release } = untilSignal(io, duration);
        try {
          const sim = await simulate({
            server: serverUrl(flags.server, io),
            authKey,
            count,
            concurrency,
            netmapConcurrency,
            advertiseRoutes: routesOf(flags.advertiseRoutes),
            hostnamePrefix: flags.hostnamePrefix,
            netmap: flags.netmap,
            connections: flags.connections,
            progress: (line) => io.err(`${line}\n`),
            signal,
          });
          const codes = Object.entries(sim.failures).map(([code, n]) => `${code} ×${n}`);
          io.out(
            `enrolled ${sim.enrolled} of ${count} devices in ${sim.seconds.toFixed(1)} s ` +
              `(${Math.round(sim.enrolled / Math.max(sim.seconds, 0.001))}/s)` +
              `${sim.failed ? `; ${sim.failed} failed (${codes.join(', ')})` : ''}\n`,
          );
          printReasons(io, sim.reasons);
          if (!signal.aborted && sim.enrolled > 0) {
            io.err(`${sim.enrolled} devices online; Ctrl-C stops them\n`);
            await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
          }
          io.err(`stopping ${sim.enrolled} devices…\n`);
          await sim.stop();
          io.out(`stopped ${sim.enrolled} devices\n`);
          if (sim.enrolled === 0) throw new Error('no device was enrolled');
        } finally {
          release();
        }
      },
    );
}

/** `simulate --protocol tailscale`: connects the fleet, holds its map streams until stopped. */
async function simulateTailscaleFleet(
  io: Io,
  options: {
    server: string;
    authKey: string;
    count: number;
    concurrency: number;
    hostnamePrefix: string;
    duration?: number;
  },
): Promise<void> {
  const { signal, release } = untilSignal(io, options.duration);
  try {
    const sim = await simulateTailscale({ ...options, progress: (line) => io.err(`${line}\n`), signal });
    io.out(
      `connected ${sim.connected} of ${options.count} Tailscale-protocol devices in ${sim.seconds.toFixed(1)} s ` +
        `(${Math.round(sim.connected / Math.max(sim.seconds, 0.001))}/s)${sim.failed ? `; ${sim.failed} failed` : ''}\n`,
    );
    printReasons(io, sim.reasons);
    if (!signal.aborted && sim.connected > 0) {
      io.err(`${sim.connected} map streams open; Ctrl-C stops them\n`);
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    }
    const holding = sim.connectedNow();
    sim.stop();
    io.out(
      `stopped ${sim.connected} devices (${holding} holding a map stream, ${sim.reconnects()} reconnects on the way)\n`,
    );
    if (sim.connected === 0) throw new Error('no device connected');
  } finally {
    release();
  }
}

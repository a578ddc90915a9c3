/**
 * The device agent behind `warren node up` and `warren node simulate`. An agent enrolls with an auth key, heartbeats every 15–20 s (jittered, so a fleet does not
 * beat in step), follows its netmap with If-None-Match, reports a few synthetic connections
 * to its peers, and disconnects when stopped. Endpoints the server does not have yet are
 * skipped for a while and tried again later.
 */
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import { platform } from 'node:os';
import { NodeClient, type RegisterResult, WarrenError } from '@warren/client';
import type { DeviceBody, NetmapBody, ReportedConnectionRequest } from '@warren/contract';
import { VERSION } from '@warren/server';

const HEARTBEAT_MS: [number, number] = [15_000, 20_000];
/** Ticks to wait before trying an endpoint again that answered 404. */
const MISSING_BACKOFF_TICKS = 10;

/** A node key from a fresh X25519 key pair; the private key is what a real agent keeps. */
export function newNodeKey(): { nodeKey: string; privateKey: string } {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return {
    nodeKey: `nodekey:${raw.toString('hex')}`,
    privateKey: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
  };
}

/** 32 random bytes: enough for simulated devices, which never speak WireGuard. */
/**
 * Synthetic connections go to HTTPS: the netmap tells an agent which peers it may reach but
 * not on which ports, and 443 is the port a demo policy opens between devices.
 */
const SYNTHETIC_PORT = 443;

export const randomNodeKey = (): string => `nodekey:${randomBytes(32).toString('hex')}`;

export const message = (error: unknown) => (error instanceof Error ? error.message : String(error));
export const isStatus = (error: unknown, status: number) => error instanceof WarrenError && error.status === status;
/**
 * An endpoint this server does not serve (yet): 404, or 401 — the server authenticates
 * unknown /v1 paths as management calls, and the heartbeat just accepted the credential.
 */
const isMissing = (error: unknown) => isStatus(error, 404) || isStatus(error, 401);

export interface AgentOptions {
  server: string;
  hostname: string;
  nodeKey: string;
  os?: string;
  advertiseRoutes?: string[];
  /** A credential from an earlier run. */
  nodeToken?: string;
  /** Bounds of the wait between heartbeats, in ms (default 15–20 s). */
  heartbeatMs?: [number, number];
  /** Follow the netmap (default true). */
  netmap?: boolean;
  /** Report synthetic connections to netmap peers (default true). */
  connections?: boolean;
  log?: (line: string) => void;
  fetch?: typeof fetch;
}

export class Agent {
  readonly client: NodeClient;
  device: DeviceBody | undefined;
  netmap: NetmapBody | undefined;
  heartbeats = 0;
  reported = 0;
  /** Called once when the server refuses the credential (device deleted or re-enrolled elsewhere). */
  onGone: ((error: WarrenError) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> = Promise.resolve();
  private stopped = false;
  private skipNetmap = 0;
  private skipConnections = 0;

  constructor(readonly options: AgentOptions) {
    this.client = new NodeClient({ url: options.server, nodeToken: options.nodeToken, fetch: options.fetch });
  }

  async enroll(authKey: string, signal?: AbortSignal): Promise<RegisterResult> {
    const { hostname, nodeKey, advertiseRoutes } = this.options;
    const result = await this.client.register(
      authKey,
      {
        hostname,
        os: this.options.os ?? platform(),
        nodeKey,
        clientVersion: VERSION,
        ...(advertiseRoutes?.length ? { advertiseRoutes } : {}),
      },
      { signal },
    );
    this.device = result.device;
    return result;
  }

  /** Starts the heartbeat loop; the first beat after `firstDelayMs` (to stagger a fleet). */
  start(firstDelayMs = this.nextDelay()): void {
    this.stopped = false;
    this.schedule(firstDelayMs);
  }

  private nextDelay(): number {
    const [min, max] = this.options.heartbeatMs ?? HEARTBEAT_MS;
    return min + Math.random() * (max - min);
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => this.schedule(this.nextDelay()));
    }, delay);
  }

  /** One round: heartbeat, then the netmap and a connection report when the server has them. */
  async tick(): Promise<void> {
    const { advertiseRoutes } = this.options;
    try {
      await this.client.heartbeat(advertiseRoutes ? { advertiseRoutes } : {});
      this.heartbeats++;
    } catch (error) {
      if (isStatus(error, 401)) {
        this.stopped = true;
        this.onGone?.(error as WarrenError);
      } else this.log(`heartbeat failed: ${message(error)}`);
      return;
    }
    if (this.options.netmap !== false) await this.followNetmap();
    if (this.options.connections !== false) await this.reportConnections();
  }

  private async followNetmap(): Promise<void> {
    if (this.skipNetmap > 0) {
      this.skipNetmap--;
      return;
    }
    try {
      const map = await this.client.netmap(this.netmap ? this.client.netmapETag : undefined);
      if (map) this.netmap = map;
    } catch (error) {
      if (isMissing(error)) this.skipNetmap = MISSING_BACKOFF_TICKS;
      else this.log(`netmap failed: ${message(error)}`);
    }
  }

  /** One or two made-up connections to random peers: a few per minute at the default pace. */
  private async reportConnections(): Promise<void> {
    const peers = this.netmap?.peers ?? [];
    const self = this.device?.addresses?.[0] ?? this.netmap?.self.addresses?.[0];
    if (this.skipConnections > 0) {
      this.skipConnections--;
      return;
    }
    if (peers.length === 0 || !self || !this.device) return;
    const now = Date.now();
    const entries: ReportedConnectionRequest[] = [];
    for (let i = randomInt(1, 3); i > 0; i--) {
      const peer = peers[randomInt(peers.length)]!;
      const address = peer.addresses.find((a) => !a.includes(':'));
      if (!address) continue;
      const packets = randomInt(2, 400);
      entries.push({
        start: new Date(now - randomInt(1_000, 30_000)).toISOString(),
        end: new Date(now).toISOString(),
        proto: 'tcp',
        src: { deviceId: this.device.id, addr: `${self}:${randomInt(32_768, 61_000)}` },
        dst: { deviceId: peer.id, addr: `${address}:${SYNTHETIC_PORT}` },
        txBytes: packets * randomInt(60, 1400),
        rxBytes: packets * randomInt(60, 1400),
        txPackets: packets,
        rxPackets: packets + randomInt(0, 20),
      });
    }
    if (entries.length === 0) return;
    try {
      await this.client.reportConnections(entries);
      this.reported += entries.length;
    } catch (error) {
      if (isMissing(error)) this.skipConnections = MISSING_BACKOFF_TICKS;
      else this.log(`connection report failed: ${message(error)}`);
    }
  }

  /** Stops the loop, lets a round in flight finish, and (by default) disconnects. */
  async stop(disconnect = true): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.ticking;
    if (!disconnect || !this.client.nodeToken) return;
    try {
      await this.client.disconnect();
    } catch (error) {
      if (!isStatus(error, 401)) this.log(`disconnect failed: ${message(error)}`);
    }
  }

  private log(line: string): void {
    this.options.log?.(`${this.options.hostname}: ${line}`);
  }
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

export interface SimulateOptions {
  server: string;
  authKey: string;
  count: number;
  /** Enrollments in flight at once (default 32). */
  concurrency?: number;
  advertiseRoutes?: string[];
  /** Hostnames are `<prefix>-1` … `<prefix>-N` (default `sim`). */
  hostnamePrefix?: string;
  /** Start heartbeating once enrolled (default true). */
  heartbeat?: boolean;
  heartbeatMs?: [number, number];
  netmap?: boolean;
  connections?: boolean;
  /** Progress lines, about one a second while enrolling. */
  progress?: (line: string) => void;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export interface Simulation {
  agents: Agent[];
  enrolled: number;
  failed: number;
  /** Failures by error code. */
  failures: Record<string, number>;
  /** Seconds the enrollment took. */
  seconds: number;
  /** Stops every agent and disconnects them (bounded concurrency). */
  stop(disconnect?: boolean): Promise<void>;
}

/**
 * Enrolls `count` devices with bounded concurrency, then (unless `heartbeat: false`) starts
 * their agents with staggered first beats. A 401 (the key stopped working) ends enrollment
 * early: every later attempt would fail the same way.
 */
export async function simulate(options: SimulateOptions): Promise<Simulation> {
  const { count, signal } = options;
  const concurrency = options.concurrency ?? 32;
  const prefix = options.hostnamePrefix ?? 'sim';
  const agents: Agent[] = [];
  const failures: Record<string, number> = {};
  let failed = 0;
  let refused = false;
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const progress = options.progress;
  const ticker = progress
    ? setInterval(() => {
        const rate = Math.round(agents.length / elapsed());
        progress(`enrolled ${agents.length}/${count} (${rate}/s)${failed ? `, ${failed} failed` : ''}`);
      }, 1000)
    : undefined;
  const indexes = Array.from({ length: count }, (_, i) => i);
  await pool(indexes, concurrency, async (i) => {
    if (refused || signal?.aborted) return;
    const agent = new Agent({
      server: options.server,
      hostname: `${prefix}-${i + 1}`,
      os: 'linux',
      nodeKey: randomNodeKey(),
      advertiseRoutes: options.advertiseRoutes,
      heartbeatMs: options.heartbeatMs,
      netmap: options.netmap,
      connections: options.connections,
      log: progress,
      fetch: options.fetch,
    });
    try {
      await agent.enroll(options.authKey, signal);
      agents.push(agent);
    } catch (error) {
      if (signal?.aborted) return;
      failed++;
      const code = error instanceof WarrenError ? error.code : 'unreachable';
      failures[code] = (failures[code] ?? 0) + 1;
      if (isStatus(error, 401)) {
        if (!refused) progress?.(`the server refused the auth key: ${message(error)}`);
        refused = true;
      }
    }
  });
  clearInterval(ticker);
  const seconds = elapsed();
  if (options.heartbeat !== false && !signal?.aborted) {
    const [, max] = options.heartbeatMs ?? HEARTBEAT_MS;
    for (const agent of agents) agent.start(Math.random() * max);
  }
  return {
    agents,
    enrolled: agents.length,
    failed,
    failures,
    seconds,
    stop: (disconnect = true) => pool(agents, concurrency, (agent) => agent.stop(disconnect)),
  };
}

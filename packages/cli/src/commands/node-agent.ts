/**
 * The device agent behind `warren node up` and `warren node simulate`. An agent enrolls with an
 * auth key, heartbeats every 15–20 s (jittered, so a fleet does not beat in step), fetches its
 * netmap when the heartbeat says it changed, reports a few synthetic connections to its peers,
 * and disconnects when stopped. Endpoints the server does not have yet are skipped for a while
 * and tried again later.
 *
 * A simulated fleet of thousands of agents lives in one process and talks to one server, so
 * what each agent holds and sends is bounded: a sample of its peers (`maxPeers`), a fleet-wide
 * number of netmap fetches in flight (`netmapSlots`), a timeout on every request, and a stop
 * that aborts instead of waiting.
 */
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { platform } from 'node:os';
import { type HeartbeatResult, NODE_TIMEOUT_MS, NodeClient, type RegisterResult, WarrenError } from '@warren/client';
import type { DeviceBody, NetmapBody, ReportedConnectionRequest } from '@warren/contract';
import { VERSION } from '../package.js';

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

/**
 * Synthetic connections go to HTTPS: the netmap tells an agent which peers it may reach but
 * not on which ports, and 443 is the port a demo policy opens between devices.
 */
const SYNTHETIC_PORT = 443;

/** 32 random bytes: enough for simulated devices, which never speak WireGuard. */
export const randomNodeKey = (): string => `nodekey:${randomBytes(32).toString('hex')}`;

/** An error's message, with the cause that fetch hides behind "fetch failed" (ECONNRESET, …). */
export const message = (error: unknown): string => {
  if (!(error instanceof Error)) return String(error);
  return error.cause instanceof Error ? `${error.message} (${error.cause.message})` : error.message;
};
export const isStatus = (error: unknown, status: number) => error instanceof WarrenError && error.status === status;
/**
 * An endpoint this server does not serve (yet): 404, or 401 — the server authenticates
 * unknown /v1 paths as management calls, and the heartbeat just accepted the credential.
 */
const isMissing = (error: unknown) => isStatus(error, 404) || isStatus(error, 401);

/**
 * A fleet-wide count of netmap fetches in flight, shared by the agents of one simulation. An
 * agent that finds every slot taken skips the fetch until its next heartbeat instead of
 * queueing (as gatedFetch does for every request): a netmap can wait a round, and a queue of
 * them would hold the fleet's request slots from its heartbeats.
 */
export class Slots {
  private taken = 0;
  constructor(readonly limit: number) {}

  /** Takes a slot when one is free; a taken slot must be given back with `release`. */
  tryTake(): boolean {
    if (this.taken >= this.limit) return false;
    this.taken++;
    return true;
  }

  release(): void {
    this.taken--;
  }
}

/**
 * `fetch` with at most `limit` requests of a fleet in flight; the rest wait their turn. A fleet
 * of thousands sharing one process would otherwise open a connection per concurrent request,
 * and a burst of them overflows the server's accept queue, where every new connection, the
 * operator's own included, waits out TCP's retransmission back-off. A slot is held until the
 * body has been read, so the connection is free again when the next request takes it.
 */
export function gatedFetch(inner: typeof fetch, limit: number): typeof fetch {
  let inFlight = 0;
  const waiting: Array<() => void> = [];
  const release = () => {
    inFlight--;
    waiting.shift()?.();
  };
  return async (input, init) => {
    if (inFlight >= limit) {
      await new Promise<void>((resolve, reject) => {
        const signal = init?.signal;
        const go = () => {
          signal?.removeEventListener('abort', abandon);
          resolve();
        };
        const abandon = () => {
          waiting.splice(waiting.indexOf(go), 1);
          reject(signal?.reason);
        };
        signal?.throwIfAborted();
        signal?.addEventListener('abort', abandon, { once: true });
        waiting.push(go);
      });
    }
    inFlight++;
    try {
      const response = await inner(input, init);
      const body = await response.arrayBuffer();
      return new Response(response.status === 304 || body.byteLength === 0 ? null : body, {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    } finally {
      release();
    }
  };
}

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
  /**
   * Peers kept from each netmap (default: all). A larger netmap is cut to a random sample of
   * this size; a simulated device needs only a few peers to address its synthetic reports.
   */
  maxPeers?: number;
  /** Shared with other agents: a netmap fetch needs a free slot, else waits for the next heartbeat. */
  netmapSlots?: Slots;
  /** Gives up on one request after this many ms (default 30 000). */
  timeoutMs?: number;
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
  /** Aborted by stop(): ends the requests of a round in flight at once. */
  private rounds = new AbortController();
  private skipNetmap = 0;
  private skipConnections = 0;

  constructor(readonly options: AgentOptions) {
    this.client = new NodeClient({
      url: options.server,
      nodeToken: options.nodeToken,
      timeoutMs: options.timeoutMs,
      fetch: options.fetch,
    });
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
    if (this.rounds.signal.aborted) this.rounds = new AbortController();
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

  /**
   * One round: heartbeat, then the netmap when it changed and a connection report, when the
   * server has them. Failures are logged, except those of a round that stop() aborted.
   */
  async tick(): Promise<void> {
    const { advertiseRoutes } = this.options;
    const { signal } = this.rounds;
    let beat: HeartbeatResult;
    try {
      beat = await this.client.heartbeat(advertiseRoutes ? { advertiseRoutes } : {}, { signal });
      this.heartbeats++;
    } catch (error) {
      if (signal.aborted) return;
      if (isStatus(error, 401)) {
        this.stopped = true;
        this.onGone?.(error as WarrenError);
      } else this.log(`heartbeat failed: ${message(error)}`);
      return;
    }
    if (this.options.netmap !== false && this.netmapChanged(beat)) await this.followNetmap(signal);
    if (this.options.connections !== false && !signal.aborted) await this.reportConnections(signal);
  }

  /**
   * Whether the heartbeat says the netmap differs from the one held. A server that does not
   * send `netmapVersion` is asked every round (If-None-Match keeps that cheap).
   */
  private netmapChanged(beat: HeartbeatResult | undefined): boolean {
    const version = beat?.netmapVersion;
    return !this.netmap || typeof version !== 'number' || version !== this.netmap.version;
  }

  private async followNetmap(signal: AbortSignal): Promise<void> {
    if (this.skipNetmap > 0) {
      this.skipNetmap--;
      return;
    }
    const slots = this.options.netmapSlots;
    if (slots && !slots.tryTake()) return;
    try {
      // A delta since the map held (applied to it), or the full map when the server sends one.
      const map = await this.client.followNetmap(this.netmap, { signal });
      if (map) this.netmap = this.sample(map);
    } catch (error) {
      if (signal.aborted) return;
      if (isMissing(error)) this.skipNetmap = MISSING_BACKOFF_TICKS;
      else this.log(`netmap failed: ${message(error)}`);
    } finally {
      slots?.release();
    }
  }

  /**
   * The netmap with at most `maxPeers` peers, picked at random (a partial Fisher–Yates shuffle
   * of the fresh array, which nothing else holds). Its version stays, so the next fetch still
   * asks for a delta since it and the next heartbeat is still compared with it. A delta applied
   * to a sample keeps it a sample of the current peers: removed ones leave it, changed ones are
   * replaced, new ones join and are cut back here.
   */
  private sample(map: NetmapBody): NetmapBody {
    const max = this.options.maxPeers;
    const peers = map.peers;
    if (max === undefined || peers.length <= max) return map;
    for (let i = 0; i < max; i++) {
      const j = randomInt(i, peers.length);
      [peers[i], peers[j]] = [peers[j]!, peers[i]!];
    }
    return { ...map, peers: peers.slice(0, max) };
  }

  /** One or two made-up connections to random peers: a few per minute at the default pace. */
  private async reportConnections(signal: AbortSignal): Promise<void> {
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
      await this.client.reportConnections(entries, { signal });
      this.reported += entries.length;
    } catch (error) {
      if (signal.aborted) return;
      if (isMissing(error)) this.skipConnections = MISSING_BACKOFF_TICKS;
      else this.log(`connection report failed: ${message(error)}`);
    }
  }

  /**
   * Stops the loop and aborts a round in flight (waiting for it could take as long as the
   * server takes to answer), then, by default, disconnects. Rejects when the disconnect fails.
   */
  async stop(disconnect = true, signal?: AbortSignal): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.rounds.abort();
    await this.ticking;
    if (disconnect) await this.disconnect(signal);
  }

  /** Marks the device offline at once. A 401 means it is gone already: nothing to do. */
  async disconnect(signal?: AbortSignal): Promise<void> {
    if (!this.client.nodeToken) return;
    try {
      await this.client.disconnect({ signal });
    } catch (error) {
      if (!isStatus(error, 401)) throw error;
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

/**
 * Lets one signal serve `users` requests in flight at once. Each request listens to its signal
 * until it ends, and Node warns of a leak past 10 listeners, which bounded concurrency above 10
 * reaches legitimately.
 */
function shareable<S extends AbortSignal>(signal: S, users: number): S {
  setMaxListeners(Math.max(users, 10), signal);
  return signal;
}

/**
 * A signal for the simulation's own requests that follows the caller's: the caller's signal
 * gets one listener (removed by `release`) rather than one per request in flight.
 */
function follow(outer: AbortSignal | undefined, users: number): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort(outer?.reason);
  if (outer?.aborted) abort();
  else outer?.addEventListener('abort', abort, { once: true });
  return { signal: shareable(controller.signal, users), release: () => outer?.removeEventListener('abort', abort) };
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
  /**
   * Netmap fetches in flight at once across the whole fleet (default 4): with a permissive
   * policy every netmap lists every device, so a large fleet's netmaps are large and many.
   */
  netmapConcurrency?: number;
  /** Peers each device keeps from its netmap (default 32), to pick synthetic connection targets. */
  maxPeers?: number;
  /** Requests of the whole fleet in flight at once (default 64); the rest wait (see gatedFetch). */
  requestConcurrency?: number;
  /** Gives up on one request after this many ms (default 30 000); also bounds stop()'s disconnects. */
  timeoutMs?: number;
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
  /**
   * Failures by distinct reason, `code: detail` as the server gave it (`unreachable: …` when
   * there was no answer), so that 10,000 refusals for one cause read as one line.
   */
  reasons: Record<string, number>;
  /** Seconds the enrollment took. */
  seconds: number;
  /**
   * Stops every agent at once, then disconnects them (bounded concurrency) within one request
   * timeout; resolves to how many could not be disconnected in that time.
   */
  stop(disconnect?: boolean): Promise<{ notDisconnected: number }>;
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
  const timeoutMs = options.timeoutMs ?? NODE_TIMEOUT_MS;
  const netmapSlots = new Slots(options.netmapConcurrency ?? 4);
  const fleetFetch = gatedFetch(options.fetch ?? fetch, options.requestConcurrency ?? 64);
  const agents: Agent[] = [];
  const failures: Record<string, number> = {};
  const reasons: Record<string, number> = {};
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
  const enrolling = follow(signal, concurrency);
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
      maxPeers: options.maxPeers ?? 32,
      netmapSlots,
      timeoutMs,
      log: progress,
      fetch: fleetFetch,
    });
    try {
      await agent.enroll(options.authKey, enrolling.signal);
      agents.push(agent);
    } catch (error) {
      if (signal?.aborted) return;
      failed++;
      const code = error instanceof WarrenError ? error.code : 'unreachable';
      failures[code] = (failures[code] ?? 0) + 1;
      const reason = error instanceof WarrenError ? error.message : `unreachable: ${message(error)}`;
      reasons[reason] = (reasons[reason] ?? 0) + 1;
      if (isStatus(error, 401)) {
        if (!refused) progress?.(`the server refused the auth key: ${message(error)}`);
        refused = true;
      }
    }
  });
  enrolling.release();
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
    reasons,
    seconds,
    stop: async (disconnect = true) => {
      // Every loop first, so no device heartbeats while others are already disconnecting.
      await Promise.all(agents.map((agent) => agent.stop(false)));
      if (!disconnect) return { notDisconnected: 0 };
      // One deadline for the whole fleet: against a server that stopped answering, waiting a
      // timeout per device would take count / concurrency timeouts. Calls still queued when it
      // passes fail at once.
      const deadline = shareable(AbortSignal.timeout(timeoutMs), concurrency);
      let notDisconnected = 0;
      let first: unknown;
      await pool(agents, concurrency, async (agent) => {
        try {
          await agent.disconnect(deadline);
        } catch (error) {
          notDisconnected++;
          first ??= error;
        }
      });
      if (notDisconnected > 0) {
        progress?.(
          `${notDisconnected} of ${agents.length} devices were not disconnected (${message(first)}); ` +
            'the server shows them offline 60 s after their last heartbeat',
        );
      }
      return { notDisconnected };
    },
  };
}

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
 * that aborts instead of waiting. The fleet itself is fleet-simulator.ts; the bounds it shares
 * between agents are concurrency.ts.
 */
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import { platform } from 'node:os';
import { type HeartbeatResult, NodeClient, type RegisterResult, WarrenError } from '@warren/client';
import type { DeviceBody, NetmapBody, ReportedConnectionRequest } from '@warren/contract';
import { VERSION } from '../package.js';
import type { Slots } from './concurrency.js';

export const HEARTBEAT_MS: [number, number] = [15_000, 20_000];
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

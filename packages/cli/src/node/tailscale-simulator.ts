/**
 * `warren node simulate --protocol tailscale`: a fleet of Tailscale-protocol devices in one
 * process. Each device has its own machine key and control channel (the ts2021 upgrade, Noise
 * IK, HTTP/2), registers with the auth key and holds its map stream open, as tailscaled does;
 * no packets flow. Connections are opened with bounded concurrency; what each device receives
 * is counted, and `onMessage` sees every map message with its arrival time (the benchmarks
 * measure how long a change takes to reach the last stream).
 *
 * A device whose map stream or control connection is lost comes back as tailscaled does: after
 * an exponential back-off with jitter (so that a fleet dropped at once does not return at once),
 * it polls the map again with the same machine and node keys, over the same connection if it is
 * still up or a new one, and receives a full map then deltas. Reconnects are counted, and
 * whether each device holds a stream at a given moment can be read, so a measurement can say
 * which devices it could not have reached.
 */
import type { ControlChannel, MapMessage, MapStream } from '@warren/server';
import { loadServer } from '../commands/server.js';
import { message } from './agent.js';
import { pool, startProgress } from './concurrency.js';

type Server = Awaited<ReturnType<typeof loadServer>>;
type MachineKey = ReturnType<Server['randomMachineKey']>;

export interface TailscaleSimulateOptions {
  server: string;
  /** Several instances of one server: device i connects to `servers[i % length]` (default: `server`). */
  servers?: string[];
  /** The auth key, or the auth key device `index` registers with (a server may tag by key). */
  authKey: string | ((index: number) => string);
  count: number;
  /**
   * The index of the first device (default 0): devices are `first` … `first + count - 1`, so
   * several simulations, in several processes, can share out one fleet.
   */
  first?: number;
  /** Devices connecting and registering at once (default 32). */
  concurrency?: number;
  /** Hostnames are `<prefix>-1` … `<prefix>-N` (default `sim`). */
  hostnamePrefix?: string;
  /** The tags device `index` asks for (`--advertise-tags`); none by default. */
  tags?: (index: number) => string[];
  /** Every map message, with the device's index and when it arrived (performance.now()). */
  onMessage?: (index: number, message: MapMessage, at: number) => void;
  /** The waits between attempts to connect again (defaults: tailscaled's order of magnitude). */
  backoff?: Partial<Backoff>;
  /** How long one attempt (connect, register if not yet, first map) may take (default 120 s). */
  attemptMs?: number;
  /** Attempts to enroll a device (connect, register, first map) before it counts as failed (default 8). */
  enrollAttempts?: number;
  progress?: (line: string) => void;
  signal?: AbortSignal;
}

/** Exponential back-off: the n-th wait is about `firstMs` × 2ⁿ, at most `maxMs`, each scaled by 0.5–1.5. */
export interface Backoff {
  firstMs: number;
  maxMs: number;
}

const DEFAULT_BACKOFF: Backoff = { firstMs: 500, maxMs: 30_000 };

export interface TailscaleDevice {
  index: number;
  /** The instance it connects to. */
  server: string;
  hostname: string;
  nodeKey: string;
  /** Holding a map stream that has delivered its full map. */
  connected: boolean;
  /** Map messages received so far, over every stream (the first of each is a full map). */
  messages: number;
  /** Streams opened again after one was lost. */
  reconnects: number;
  /** Peers in the device's map as last received. */
  peers: Set<number>;
}

export interface TailscaleSimulation {
  /** The devices that enrolled, connected or not at this moment. */
  devices: TailscaleDevice[];
  /** Devices that enrolled (registered and received a first full map). */
  connected: number;
  failed: number;
  /** Failures by reason, so 10,000 refusals for one cause read as one line. */
  reasons: Record<string, number>;
  /** Seconds until every device had registered and received its full map. */
  seconds: number;
  /** Devices holding a map stream with its full map right now. */
  connectedNow(): number;
  /** Streams opened again after one was lost, over the whole fleet so far. */
  reconnects(): number;
  stop(): void;
}

/** Keeps a device's peer set as the map messages describe it. */
function applyPeers(peers: Set<number>, map: MapMessage): void {
  const ids = (list: unknown) => (Array.isArray(list) ? list : []).map((p) => Number((p as { ID?: number }).ID ?? p));
  if (Array.isArray(map.Peers)) {
    peers.clear();
    for (const id of ids(map.Peers)) peers.add(id);
  }
  for (const id of ids(map.PeersChanged)) peers.add(id);
  for (const id of ids(map.PeersRemoved)) peers.delete(id);
}

/** The wait before attempt `failures` + 1. */
function backoffDelay(backoff: Backoff, failures: number): number {
  const base = Math.min(backoff.maxMs, backoff.firstMs * 2 ** Math.min(failures, 20));
  return base * (0.5 + Math.random());
}

/** A refusal no retry cures: the server said no to the credentials. */
class Refused extends Error {}

/** One simulated device: its keys, its connection and stream, and what it has received. */
class Device {
  readonly state: TailscaleDevice;
  private readonly machine: MachineKey;
  private channel: ControlChannel | undefined;
  private stream: MapStream | undefined;
  private registered = false;
  private stopped = false;
  /** Attempts that failed since the last stream delivered its full map. */
  private failures = 0;
  private retry: NodeJS.Timeout | undefined;
  /** Attempts started; one still running that is not the latest was abandoned. */
  private attempts = 0;

  constructor(
    private readonly server: Server,
    private readonly serverKey: Buffer,
    private readonly options: TailscaleSimulateOptions & { backoff: Backoff },
    index: number,
    url: string,
  ) {
    const hostname = `${options.hostnamePrefix ?? 'sim'}-${index + 1}`;
    this.machine = server.randomMachineKey();
    this.state = {
      index,
      server: url,
      hostname,
      nodeKey: server.randomTailscaleNodeKey(),
      connected: false,
      messages: 0,
      reconnects: 0,
      peers: new Set(),
    };
  }

  /**
   * Connects, registers and waits for the first full map, trying again after a back-off when
   * the connection or the stream is lost on the way; throws the last failure after `attempts`.
   */
  async enroll(attempts: number): Promise<void> {
    for (;;) {
      try {
        await this.connect();
        this.failures = 0;
        return;
      } catch (error) {
        const over = () => this.stopped || this.options.signal?.aborted;
        if (error instanceof Refused || over() || ++this.failures >= attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(this.options.backoff, this.failures - 1)));
        if (over()) throw error;
      }
    }
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retry);
    this.state.connected = false;
    this.channel?.close();
  }

  /**
   * One attempt, abandoned after `attemptMs`: a server that accepts the connection and then
   * never answers would otherwise hold the device (and its enrollment slot) for good.
   */
  private async connect(): Promise<void> {
    const attempt = ++this.attempts;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      const ms = this.options.attemptMs ?? 120_000;
      timer = setTimeout(() => reject(new Error(`no full map within ${ms / 1000} s`)), ms);
    });
    try {
      await Promise.race([this.attempt(attempt), expired]);
    } catch (error) {
      // Whatever the abandoned attempt still holds goes; the next one starts afresh.
      this.attempts++;
      this.channel?.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** A channel (the one still up, or a new one), the registration once, a map stream until its full map. */
  private async attempt(attempt: number): Promise<void> {
    const { index, hostname, nodeKey } = this.state;
    if (!this.channel || this.channel.closed) {
      this.channel?.close();
      const opened = await this.server.ControlChannel.open(this.state.server, this.serverKey, this.machine);
      // Opened for an attempt already given up: not this device's channel any more.
      if (attempt !== this.attempts) {
        opened.close();
        throw new Error('abandoned');
      }
      this.channel = opened;
    }
    const channel = this.channel;
    if (!this.registered) {
      const authKey = typeof this.options.authKey === 'string' ? this.options.authKey : this.options.authKey(index);
      const answer = await channel.register({
        NodeKey: nodeKey,
        Auth: { AuthKey: authKey },
        Hostinfo: {
          Hostname: hostname,
          OS: 'linux',
          IPNVersion: 'warren-simulator',
          RequestTags: this.options.tags?.(index),
        },
      });
      if (typeof answer.Error === 'string' && answer.Error) {
        channel.close();
        throw /auth key/i.test(answer.Error) ? new Refused(answer.Error) : new Error(answer.Error);
      }
      this.registered = true;
    }
    if (attempt !== this.attempts) throw new Error('abandoned');
    let first: () => void = () => {};
    let lost: (error: Error) => void = () => {};
    const full = new Promise<void>((resolve, reject) => {
      first = resolve;
      lost = reject;
    });
    let received = 0;
    const stream = channel.map({ NodeKey: nodeKey, Hostinfo: { Hostname: hostname, OS: 'linux' } }, (map) => {
      const at = performance.now();
      this.state.messages++;
      applyPeers(this.state.peers, map);
      if (++received === 1) {
        this.state.connected = true;
        first();
      }
      this.options.onMessage?.(index, map, at);
    });
    this.stream = stream;
    const ended = (error?: Error) => {
      if (this.stream !== stream) return;
      this.state.connected = false;
      if (received === 0) lost(error ?? new Error('the map stream ended before its first message'));
      else this.lost();
    };
    stream.done.then(() => ended(), ended);
    try {
      await full;
    } catch (error) {
      this.stream = undefined;
      stream.close();
      throw error;
    }
  }

  /** The stream of an enrolled device ended: poll again after a back-off, until stopped. */
  private lost(): void {
    this.stream = undefined;
    if (this.stopped) return;
    const delay = backoffDelay(this.options.backoff, this.failures);
    this.retry = setTimeout(() => {
      this.connect().then(
        () => {
          this.failures = 0;
          this.state.reconnects++;
        },
        () => {
          this.failures++;
          this.lost();
        },
      );
    }, delay);
  }
}

export async function simulateTailscale(options: TailscaleSimulateOptions): Promise<TailscaleSimulation> {
  const server = await loadServer();
  const { count, signal } = options;
  const concurrency = options.concurrency ?? 32;
  const servers = options.servers ?? [options.server];
  const settings = { ...options, backoff: { ...DEFAULT_BACKOFF, ...options.backoff } };
  // Every instance of one server presents the same key (it lives in the shared database).
  const serverKey = await server.serverNoiseKey(servers[0], signal);
  const enrolled: Device[] = [];
  const reasons: Record<string, number> = {};
  let failed = 0;
  let refused = false;
  let stopped = false;
  const progress = options.progress;
  const clock = startProgress('connected', count, () => ({ done: enrolled.length, failed }), progress);

  await pool(
    Array.from({ length: count }, (_, i) => (options.first ?? 0) + i),
    concurrency,
    async (index) => {
      if (refused || signal?.aborted) return;
      const device = new Device(server, serverKey, settings, index, servers[index % servers.length]);
      try {
        await device.enroll(options.enrollAttempts ?? 8);
        // Stopped meanwhile: nothing to keep.
        if (stopped) device.stop();
        else enrolled.push(device);
      } catch (error) {
        device.stop();
        if (signal?.aborted) return;
        if (error instanceof Refused) refused = true;
        failed++;
        const reason = message(error);
        reasons[reason] = (reasons[reason] ?? 0) + 1;
      }
    },
  );
  const seconds = clock.stop();
  enrolled.sort((a, b) => a.state.index - b.state.index);
  const devices = enrolled.map((d) => d.state);
  return {
    devices,
    connected: devices.length,
    failed,
    reasons,
    seconds,
    connectedNow: () => devices.reduce((n, d) => n + (d.connected ? 1 : 0), 0),
    reconnects: () => devices.reduce((n, d) => n + d.reconnects, 0),
    stop: () => {
      stopped = true;
      for (const device of enrolled) device.stop();
    },
  };
}

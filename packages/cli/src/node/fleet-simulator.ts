/**
 * `warren node simulate`: a fleet of agents (agent.ts) in one process, enrolled with bounded
 * concurrency and heartbeating with staggered first beats, for load and scale tests.
 */
import { NODE_TIMEOUT_MS, WarrenError } from '@warren/client';
import { Agent, HEARTBEAT_MS, isStatus, message, randomNodeKey } from './agent.js';
import { follow, gatedFetch, pool, Slots, shareable, startProgress } from './concurrency.js';

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
  const progress = options.progress;
  const clock = startProgress('enrolled', count, () => ({ done: agents.length, failed }), progress);
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
  const seconds = clock.stop();
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

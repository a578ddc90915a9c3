// The Tailscale fleet benchmark's simulated devices, shared out over `processes` child processes
// (tailscale-fleet-process.ts), each running `warren node simulate --protocol tailscale`'s
// simulator on its slice of the device indexes. At 10,000 streams one event loop decoding every
// update would take longer than the server takes to send them; spread over processes, the
// decoding runs beside the server's work instead of after it. Arrival times are on the machine's
// monotonic clock (`clock()`), the same in every process.
import { type ChildProcess, fork } from 'node:child_process';
import { join } from 'node:path';

/** What one process simulates. */
export interface FleetShare {
  urls: string[];
  /** One auth key for every device, or one per group (device i uses authKey[floor(i / group)]). */
  authKey: string | string[];
  /** Whether device i asks for tag:g<floor(i / group)> itself. */
  tagged: boolean;
  group: number;
  first: number;
  count: number;
  concurrency: number;
  prefix: string;
}

/** A map message as the parent sees it: which device, when (clock()), and its packet filter as JSON. */
export interface MapArrival {
  index: number;
  at: number;
  filter: string | undefined;
}

export type FleetRequest = { kind: 'start'; share: FleetShare } | { kind: 'census' } | { kind: 'stop' };
export type FleetEvent =
  | { kind: 'progress'; line: string }
  | { kind: 'ready'; devices: number[]; failed: number; reasons: Record<string, number>; seconds: number }
  | { kind: 'maps'; maps: MapArrival[] }
  | { kind: 'census'; connected: number; reconnects: number };

/** The machine's monotonic clock in ms, as the fleet's processes stamp arrivals. */
export const clock = () => Number(process.hrtime.bigint()) / 1e6;

export interface Fleet {
  /** The indexes of the devices that enrolled, in order. */
  devices: number[];
  failed: number;
  reasons: Record<string, number>;
  /** Seconds until every process had enrolled its share. */
  seconds: number;
  /** The processes, whose CPU time is the simulator's. */
  pids: number[];
  /** Devices holding a map stream now, and reconnects so far, over every process. */
  census(): Promise<{ connected: number; reconnects: number }>;
  stop(): Promise<void>;
}

const script = join(import.meta.dirname, 'tailscale-fleet-process.ts');

/**
 * Starts `count` devices over `processes` processes (device i in the process i falls in) and
 * resolves once every one has enrolled its share; `onMap` gets every arrival from then on and
 * during enrollment.
 */
export async function startFleet(
  share: Omit<FleetShare, 'first' | 'count' | 'concurrency'>,
  count: number,
  options: {
    processes: number;
    concurrency: number;
    onMap: (arrival: MapArrival) => void;
    progress: (line: string) => void;
  },
): Promise<Fleet> {
  const processes = Math.max(1, Math.min(options.processes, count));
  const children: ChildProcess[] = [];
  const ready = [];
  for (let p = 0; p < processes; p++) {
    const first = Math.floor((count * p) / processes);
    const last = Math.floor((count * (p + 1)) / processes);
    const child = fork(script, [], {
      execArgv: ['--conditions=@warren/source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    children.push(child);
    ready.push(
      new Promise<Extract<FleetEvent, { kind: 'ready' }>>((resolve, reject) => {
        child.once('exit', (code) => reject(new Error(`a fleet process exited (${code}) before its devices enrolled`)));
        child.on('message', (event: FleetEvent) => {
          if (event.kind === 'maps') for (const arrival of event.maps) options.onMap(arrival);
          else if (event.kind === 'progress')
            options.progress(processes > 1 ? `[${p + 1}/${processes}] ${event.line}` : event.line);
          else if (event.kind === 'ready') resolve(event);
        });
      }),
    );
    // Each process shares the enrollment concurrency, so the server sees the same load as from one.
    const concurrency = Math.max(1, Math.round(options.concurrency / processes));
    child.send({ kind: 'start', share: { ...share, first, count: last - first, concurrency } } satisfies FleetRequest);
  }
  const stop = async () => {
    await Promise.all(
      children.map(
        (child) =>
          new Promise<void>((resolve) => {
            if (child.exitCode !== null || !child.connected) return resolve();
            child.once('exit', () => resolve());
            child.send({ kind: 'stop' } satisfies FleetRequest);
          }),
      ),
    );
  };
  let shares: Array<Extract<FleetEvent, { kind: 'ready' }>>;
  try {
    shares = await Promise.all(ready);
  } catch (error) {
    for (const child of children) child.kill('SIGKILL');
    throw error;
  }
  const reasons: Record<string, number> = {};
  for (const s of shares)
    for (const [reason, n] of Object.entries(s.reasons)) reasons[reason] = (reasons[reason] ?? 0) + n;
  return {
    devices: shares.flatMap((s) => s.devices).sort((a, b) => a - b),
    failed: shares.reduce((n, s) => n + s.failed, 0),
    reasons,
    // The slowest share's enrollment, not counting the processes' own start.
    seconds: Math.max(...shares.map((s) => s.seconds)),
    pids: children.map((c) => c.pid!),
    census: async () => {
      const answers = await Promise.all(
        children.map(
          (child) =>
            new Promise<{ connected: number; reconnects: number }>((resolve) => {
              // A process that died holds no stream: its devices count as disconnected.
              if (!child.connected) return resolve({ connected: 0, reconnects: 0 });
              const gone = () => resolve({ connected: 0, reconnects: 0 });
              const own = (event: FleetEvent) => {
                if (event.kind !== 'census') return;
                child.off('message', own).off('exit', gone);
                resolve(event);
              };
              child.on('message', own).once('exit', gone);
              child.send({ kind: 'census' } satisfies FleetRequest);
            }),
        ),
      );
      return answers.reduce((sum, a) => ({
        connected: sum.connected + a.connected,
        reconnects: sum.reconnects + a.reconnects,
      }));
    },
    stop,
  };
}

// `warren serve` with bench/soak-probe.mjs preloaded: what the process holds after a full
// collection, which only the process itself can measure. The benchmarks that report memory per
// device read it here, so a figure does not count garbage not yet collected.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serveWarren } from './warren-process.js';

/** One sample the probe writes (soak-probe.mjs says what each figure is). */
export interface ProbeSample {
  at: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Anonymous resident pages (Linux): the heaps; the rest of rss is the binary and libraries. */
  rssAnon?: number;
  collected: boolean;
  /** With WARREN_SOAK_COMPACT=1: the heap after a collection that compacts every old-space page. */
  afterCompaction?: { rss: number; heapUsed: number; heapTotal: number };
  spaces?: Record<string, { size: number; used: number }>;
  /** The open map streams' builds so far (control/tailscale/map-stream.ts). */
  builds?: MapBuilds;
}

export interface MapBuilds {
  /** The packet filter alone. */
  filterOnly: number;
  /** The whole map, as a change moved more than the policy. */
  whole: number;
  /** The whole map where only policies had moved: the map's shape had (map-state.ts). */
  declined: number;
}

/** A change read by the server's change feed in which the policy moved, as the probe logs it. */
export interface FeedRead {
  at: number;
  feed: {
    previous?: { epoch: number; presenceEpoch: number; policyVersion: number };
    head: { epoch: number; presenceEpoch: number; policyVersion: number };
    policyOnly: boolean;
    /** Devices the change logs named, when they narrowed the change down. */
    devices?: number;
  };
  /** The builds before the streams heard of it. */
  builds: MapBuilds;
}

const lines = (probe: string) =>
  existsSync(probe)
    ? readFileSync(probe, 'utf8')
        .trim()
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as ProbeSample | FeedRead)
    : [];

/**
 * Starts `warren serve` on `db` with the probe writing to `probe` (a file path); `env` and
 * `nodeArgs` as serveWarren's. `collected()` asks for a full collection and returns the sample
 * taken right after it.
 */
export async function serveProbed(
  db: string,
  probe: string,
  options: { env?: Record<string, string>; nodeArgs?: string[] } = {},
) {
  const server = await serveWarren(db, {
    nodeArgs: ['--expose-gc', '--import', join(import.meta.dirname, 'soak-probe.mjs'), ...(options.nodeArgs ?? [])],
    env: { ...options.env, WARREN_SOAK_PROBE: probe },
  });
  const collected = async (): Promise<ProbeSample> => {
    const asked = Date.now();
    server.child.kill('SIGUSR2');
    // A full collection of a large heap takes seconds on a loaded machine.
    for (let waited = 0; waited < 120_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const found = lines(probe).findLast(
        (sample): sample is ProbeSample => 'collected' in sample && sample.collected && sample.at >= asked,
      );
      if (found) return found;
    }
    throw new Error('the server did not report its memory');
  };
  /** The builds so far, from the first sample the probe writes from now (one a second). */
  const builds = async (): Promise<MapBuilds> => {
    const asked = Date.now();
    for (let waited = 0; waited < 10_000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const found = lines(probe).findLast((line) => !('feed' in line) && line.at >= asked) as ProbeSample | undefined;
      if (found?.builds) return found.builds;
    }
    throw new Error('the server did not report its builds');
  };
  const feedReads = () => lines(probe).filter((line): line is FeedRead => 'feed' in line);
  return { ...server, collected, builds, feedReads };
}

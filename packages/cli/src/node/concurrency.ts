/**
 * The bounds a simulated fleet shares between its agents: netmap fetches in flight, requests
 * in flight, work pools, and abort signals that many requests listen to at once.
 */
import { setMaxListeners } from 'node:events';

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

/** Runs `work` over `items` with at most `limit` in flight. */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
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
export function shareable<S extends AbortSignal>(signal: S, users: number): S {
  setMaxListeners(Math.max(users, 10), signal);
  return signal;
}

/**
 * A signal for the simulation's own requests that follows the caller's: the caller's signal
 * gets one listener (removed by `release`) rather than one per request in flight.
 */
export function follow(outer: AbortSignal | undefined, users: number): { signal: AbortSignal; release(): void } {
  const controller = new AbortController();
  const abort = () => controller.abort(outer?.reason);
  if (outer?.aborted) abort();
  else outer?.addEventListener('abort', abort, { once: true });
  return { signal: shareable(controller.signal, users), release: () => outer?.removeEventListener('abort', abort) };
}

/**
 * A fleet's progress, one line a second while it starts: `what` done of `count`, the rate and
 * the failures. `stop()` ends it and gives the seconds elapsed.
 */
export function startProgress(
  what: string,
  count: number,
  counts: () => { done: number; failed: number },
  progress?: (line: string) => void,
): { elapsed(): number; stop(): number } {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const ticker = progress
    ? setInterval(() => {
        const { done, failed } = counts();
        const rate = Math.round(done / elapsed());
        progress(`${what} ${done}/${count} (${rate}/s)${failed ? `, ${failed} failed` : ''}`);
      }, 1000)
    : undefined;
  return {
    elapsed,
    stop: () => {
      clearInterval(ticker);
      return elapsed();
    },
  };
}

/**
 * Deliveries yield to requests. The dispatcher runs on the event loop that serves the API,
 * and an attempt costs that loop about 0.4 ms of CPU (signing, the HTTP exchange, a share of
 * the batch's SQL; more on a loaded machine, where the write that wakes a receiver often
 * loses the core to it) against 2 to 3 ms for a whole `POST /v1/keys`: with 20 endpoints one
 * key makes 20 attempts, about three times the request's own cost. So when requests are
 * arriving while the loop has no idle time left, attempts start at a bounded rate
 * (`busyRate`, 50 a second) and the backlog waits in the outbox; as soon as the loop has room
 * again (or no request came during the last window) the dispatcher sends at full speed. The
 * floor keeps deliveries moving under any load; waiting on a slow endpoint costs nothing, so
 * endpoints still proceed in parallel.
 */
import type { Server } from 'node:http';
import { type EventLoopUtilization, performance } from 'node:perf_hooks';

export interface PacerOptions {
  windowMs: number;
  /** Event-loop utilisation over a window above which the loop counts as saturated. */
  saturated: number;
  /** Attempts started per second while the API keeps the loop saturated. */
  busyRate: number;
}

const DEFAULTS: PacerOptions = { windowMs: 100, saturated: 0.85, busyRate: 50 };

export class Pacer {
  private requests = 0;
  private tokens = Number.POSITIVE_INFINITY;
  private waiting: (() => void)[] = [];
  private last: EventLoopUtilization = performance.eventLoopUtilization();
  private timer: NodeJS.Timeout | undefined;
  private readonly onRequest = () => {
    this.requests++;
  };

  constructor(
    private readonly server: Server | undefined,
    private readonly options: PacerOptions = DEFAULTS,
  ) {}

  start(): void {
    this.server?.on('request', this.onRequest);
    this.timer = setInterval(() => this.window(), this.options.windowMs).unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.server?.off('request', this.onRequest);
    this.tokens = Number.POSITIVE_INFINITY;
    this.release();
  }

  /** Resolves when the dispatcher may start its next attempt. */
  turn(): Promise<void> | undefined {
    if (this.tokens > 0) {
      this.tokens--;
      return undefined;
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private window(): void {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, this.last);
    this.last = now;
    const { saturated, busyRate, windowMs } = this.options;
    const busy = this.requests > 0 && utilization > saturated;
    this.requests = 0;
    this.tokens = busy ? Math.max(1, Math.round((busyRate * windowMs) / 1000)) : Number.POSITIVE_INFINITY;
    this.release();
  }

  private release(): void {
    while (this.waiting.length > 0 && this.tokens > 0) {
      this.tokens--;
      this.waiting.shift()?.();
    }
  }
}

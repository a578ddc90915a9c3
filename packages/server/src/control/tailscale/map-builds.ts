/**
 * How many map streams of this process build their map at once. A change that concerns every
 * stream (a policy change) would otherwise start thousands of builds together, each holding
 * its queries in flight: the database driver's queue then wakes every waiter on each release
 * (SQLite's single connection) and the garbage collector carries every half-built map at
 * once, so the last stream waited for all of them. In line, each build runs on a warm cache
 * and a stream whose turn has not come takes every later change into the one build it waits
 * for (map-stream.ts).
 */

/** Builds in flight per process: enough to overlap one build's queries with another's work. */
const CONCURRENT_BUILDS = 8;

export class BuildLine {
  private running = 0;
  /** Builds waiting their turn, first come first served: `queue[head]` is next. */
  private queue: Array<() => Promise<void>> = [];
  private head = 0;

  constructor(private readonly limit = CONCURRENT_BUILDS) {}

  /** Runs `build` when fewer than the limit run; a failed build is the caller's to handle. */
  run(build: () => Promise<void>): void {
    this.queue.push(build);
    this.next();
  }

  /** Builds waiting their turn (for figures and tests). */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  private next(): void {
    while (this.running < this.limit && this.head < this.queue.length) {
      const build = this.queue[this.head++];
      if (this.head > 1024 && this.head * 2 > this.queue.length) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.running++;
      build()
        .catch(() => {})
        .finally(() => {
          this.running--;
          this.next();
        });
    }
  }
}

const lines = new WeakMap<object, BuildLine>();

/** The line of the process's map streams, one per `owner` (the protocol's shared state). */
export function buildLine(owner: object): BuildLine {
  let line = lines.get(owner);
  if (!line) {
    line = new BuildLine();
    lines.set(owner, line);
  }
  return line;
}

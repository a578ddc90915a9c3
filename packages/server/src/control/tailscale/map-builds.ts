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

/**
 * Builds started in one turn of the event loop before the line lets the loop run. A build that
 * reads nothing (a policy change's filter alone) settles in microtasks, so without a pause a
 * fan-out to every stream ran as one turn: no map it wrote left the process until the last
 * was made (HTTP/2 sends what a session was given on a later turn), and nothing else was
 * served meanwhile. In turns of this many, the first streams' maps are on the wire, and their
 * clients reading them, while the later ones are made, in the order their changes came.
 */
const BUILDS_PER_TURN = 64;

export class BuildLine {
  private running = 0;
  /** Builds waiting their turn, first come first served: `queue[head]` is next. */
  private queue: Array<() => Promise<void>> = [];
  private head = 0;
  /** Builds started in this turn of the event loop (counted from 0 again on the next). */
  private startedThisTurn = 0;

  constructor(
    private readonly limit = CONCURRENT_BUILDS,
    private readonly perTurn = BUILDS_PER_TURN,
  ) {}

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
      if (this.startedThisTurn === this.perTurn) return;
      // The next turn starts counting again, and carries on with what waits past this one's share.
      if (this.startedThisTurn++ === 0) setImmediate(() => this.nextTurn());
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

  private nextTurn(): void {
    this.startedThisTurn = 0;
    this.next();
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

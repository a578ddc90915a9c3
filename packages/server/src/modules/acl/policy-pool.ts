/**
 * Policy validation off the event loop, with a budget. A policy is up to 1 MiB of text sent by
 * any key with the `acls` scope; however its validation scales, running it on the thread that
 * answers every network's requests lets one caller stall them all. Here each document is
 * validated (syntax, references, compilation, its own tests) in one of a few worker threads; a
 * validation that outlives its budget has its worker terminated (a fresh one takes its place)
 * and is refused with 422 `policy_too_complex`, so nothing is stored. A worker also has a heap
 * limit, so a document that needs absurd memory is refused the same way instead of taking the
 * process down.
 *
 * The budget is the worker thread's own processor time from the moment it takes the document:
 * what the document costs, not how busy the machine is. Workers run below the normal priority
 * (policy.worker.ts), so on a loaded machine they may wait seconds for a CPU; counted in wall
 * time, a three-rule policy was refused as too complex at ten runnable threads per core. The
 * pool's timer fires after the budget in wall time (a thread cannot use more CPU than time
 * passes) and reads the worker's CPU time (lib/thread-cpu.ts): under the budget, it waits for
 * the remainder and looks again. A worker starved of the CPU altogether is still stopped after
 * WALL_CEILING_FACTOR times the budget in wall time, so no request is held without end; that is
 * refused the same way, since the document was not validated. Where a thread's CPU time cannot
 * be read (systems other than Linux), the budget counts wall time, as the ceiling does.
 * Time spent queued behind other validations is held against neither.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ValidationResultBody } from '@warren/contract';
import { ApiError } from '../../core/errors.js';
import { threadCpuMs } from '../../lib/thread-cpu.js';
import type { PreparedPolicy } from './policy-transfer.js';

export interface PolicyPoolOptions {
  /** Worker threads (default 2: validations are rare, and the machine has other work). */
  size?: number;
  /** The worker's CPU time one validation may use before it is refused (ms). */
  budgetMs: number;
  /** Wall time a validation may take, as a multiple of its budget (default WALL_CEILING_FACTOR). */
  wallCeilingFactor?: number;
  /**
   * The CPU time (ms) a worker thread has used, by the name the worker gave for itself; undefined
   * when it cannot be known. Default: read from /proc (lib/thread-cpu.ts).
   */
  threadCpuMs?: (thread: string) => number | undefined;
  /** Heap a worker may grow to (MiB); past it the validation is refused. */
  maxHeapMb?: number;
}

export type PreparedResult = ValidationResultBody & { prepared?: PreparedPolicy };

/** `asTailscale`: a text sent through Tailscale's API, read as Tailscale reads it (see validatePolicy). */
export interface TextOrigin {
  asTailscale?: boolean;
}

interface Job {
  text: string;
  prepare: boolean;
  asTailscale: boolean;
  budgetMs: number;
  resolve: (result: PreparedResult) => void;
  reject: (error: Error) => void;
}

interface RunningJob extends Job {
  id: number;
  timer?: NodeJS.Timeout;
  /** When the worker took the document (performance.now()). */
  startedAt?: number;
  /** The worker's CPU time then (ms); undefined when it cannot be read, and wall time counts. */
  cpuAtStart?: number;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  /** The worker thread's name for its CPU clock (lib/thread-cpu.ts), when it has one. */
  thread?: string;
  job?: RunningJob;
}

export const DEFAULT_POLICY_BUDGET_MS = 1_500;
/**
 * How many times its CPU budget a validation may take in wall time. A worker below the normal
 * priority at ten runnable threads per core gets about 1 % of one; a document of a few rules
 * needs milliseconds of CPU, so even then it is done long before 10 budgets (15 s by default),
 * while a request is never held for longer than that.
 */
export const WALL_CEILING_FACTOR = 10;
const DEFAULT_MAX_HEAP_MB = 512;

export const policyTooComplex = (why: string) =>
  new ApiError(
    'policy_too_complex',
    `the policy could not be validated within the server's limits (${why}); nothing was changed. Split large groups or repeated rules, or ask the operator to raise the policy time budget`,
  );

/**
 * The worker's module: compiled beside this one in a build (the server's dist/, or the
 * command's bundle, which has it as an entry of its own), else its TypeScript source.
 */
function workerUrl(): URL {
  const compiled = new URL('./policy.worker.js', import.meta.url);
  if (compiled.protocol === 'file:' && existsSync(fileURLToPath(compiled))) return compiled;
  return new URL('./policy-worker-source.mjs', import.meta.url);
}

export class PolicyPool {
  private readonly slots: (Slot | undefined)[];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: PolicyPoolOptions) {
    this.slots = new Array(options.size ?? 2).fill(undefined);
  }

  /** The budget of one validation (ms). */
  get budgetMs(): number {
    return this.options.budgetMs;
  }

  /** The validation result of `text`; rejects with policy_too_complex past the budget. */
  validate(text: string, origin: TextOrigin = {}): Promise<ValidationResultBody> {
    return this.run(text, false, this.options.budgetMs, origin).then(({ valid, errors, tests }) => ({
      valid,
      errors,
      tests,
    }));
  }

  /**
   * validate(), and for a valid text what the worker read (`prepared`): a caller storing the
   * policy builds its indexes from that instead of reading the text again on its own thread.
   * `budgetMs` replaces the pool's budget for this document (a stored policy being loaded).
   */
  prepare(text: string, options: TextOrigin & { budgetMs?: number } = {}): Promise<PreparedResult> {
    return this.run(text, true, options.budgetMs ?? this.options.budgetMs, options);
  }

  private run(text: string, prepare: boolean, budgetMs: number, origin: TextOrigin): Promise<PreparedResult> {
    if (this.closed) return Promise.reject(new Error('the policy pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ text, prepare, asTailscale: origin.asTailscale === true, budgetMs, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new Error('the server is closing'));
    await Promise.all(
      this.slots.map(async (slot, i) => {
        this.slots[i] = undefined;
        if (!slot) return;
        slot.job?.reject(new Error('the server is closing'));
        if (slot.job?.timer) clearTimeout(slot.job.timer);
        await slot.worker.terminate();
      }),
    );
  }

  /** Hands queued documents to idle workers, starting workers as needed. */
  private dispatch(): void {
    for (let i = 0; i < this.slots.length && this.queue.length > 0; i++) {
      const slot = this.slots[i] ?? this.spawn(i);
      this.slots[i] = slot;
      if (slot.job) continue;
      const job = this.queue.shift() as Job;
      const id = this.nextId++;
      slot.job = { ...job, id };
      slot.ready.then(
        () => {
          if (slot.job?.id !== id) return;
          slot.job.startedAt = performance.now();
          slot.job.cpuAtStart = this.workerCpuMs(slot);
          this.arm(i, slot, job.budgetMs);
          slot.worker.postMessage({ id, text: job.text, prepare: job.prepare, asTailscale: job.asTailscale });
        },
        () => {},
      );
    }
  }

  /** The CPU time the slot's worker has used so far (ms), when it can be known. */
  private workerCpuMs(slot: Slot): number | undefined {
    return slot.thread === undefined ? undefined : (this.options.threadCpuMs ?? threadCpuMs)(slot.thread);
  }

  /** Looks at the slot's job again after `delayMs`. */
  private arm(index: number, slot: Slot, delayMs: number): void {
    if (!slot.job) return;
    slot.job.timer = setTimeout(() => this.check(index, slot), Math.max(1, Math.ceil(delayMs)));
  }

  /**
   * Refuses the running job once its worker has used the budget in CPU time, or once the wall
   * ceiling has passed; else looks again when the budget could next run out. A thread cannot
   * use more CPU than time passes, so that is after the budget's remainder, in wall time.
   */
  private check(index: number, slot: Slot): void {
    const job = slot.job;
    if (!job || job.startedAt === undefined) return;
    const wallMs = performance.now() - job.startedAt;
    const { cpuAtStart } = job;
    const cpuNow = cpuAtStart === undefined ? undefined : this.workerCpuMs(slot);
    const cpuMs = cpuAtStart === undefined || cpuNow === undefined ? undefined : cpuNow - cpuAtStart;
    // Without a CPU clock (or once it cannot be read), wall time is all there is to count.
    const usedMs = cpuMs ?? wallMs;
    const ceilingMs = job.budgetMs * (this.options.wallCeilingFactor ?? WALL_CEILING_FACTOR);
    if (usedMs >= job.budgetMs) {
      const over = cpuMs === undefined ? `over ${job.budgetMs} ms` : `over ${job.budgetMs} ms of processor time`;
      this.fail(index, slot, policyTooComplex(over));
    } else if (wallMs >= ceilingMs) {
      this.fail(index, slot, policyTooComplex(`unfinished after ${Math.round(ceilingMs)} ms on a busy server`));
    } else {
      this.arm(index, slot, Math.min(job.budgetMs - usedMs, ceilingMs - wallMs));
    }
  }

  private spawn(index: number): Slot {
    const worker = new Worker(workerUrl(), {
      resourceLimits: { maxOldGenerationSizeMb: this.options.maxHeapMb ?? DEFAULT_MAX_HEAP_MB },
    });
    // Idle workers must not keep a finished process alive.
    worker.unref();
    let markReady: () => void = () => {};
    let markFailed: (error: Error) => void = () => {};
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    // A worker retired before it took any document has nobody waiting on it.
    ready.catch(() => {});
    const slot: Slot = { worker, ready };
    worker.on('message', (message: { ready?: true; thread?: string; id?: number } & PreparedResult) => {
      if (message.ready) {
        slot.thread = message.thread;
        markReady();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== message.id) return;
      clearTimeout(job.timer);
      slot.job = undefined;
      const { valid, errors, tests, prepared } = message;
      job.resolve({ valid, errors, tests, prepared });
      this.dispatch();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      markFailed(error);
      // Out of heap: the document, not the server, is at fault.
      const refusal =
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? policyTooComplex(`over ${this.options.maxHeapMb ?? DEFAULT_MAX_HEAP_MB} MiB of memory`)
          : error;
      this.fail(index, slot, refusal);
    });
    worker.on('exit', () => {
      markFailed(new Error('the policy worker exited'));
      if (this.slots[index] === slot) this.fail(index, slot, new Error('the policy worker exited'));
    });
    return slot;
  }

  /**
   * Ends the slot's job with `error` and retires its worker. The replacement starts now, not at
   * the next validation: loading the engine takes a while, which no caller should wait for.
   */
  private fail(index: number, slot: Slot, error: Error): void {
    const job = slot.job;
    slot.job = undefined;
    if (job?.timer) clearTimeout(job.timer);
    if (this.slots[index] === slot) this.slots[index] = this.closed ? undefined : this.spawn(index);
    void slot.worker.terminate();
    job?.reject(error);
    if (!this.closed) this.dispatch();
  }
}

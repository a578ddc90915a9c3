/**
 * Policy validation off the event loop, with a time budget. A policy is up to 1 MiB of text
 * sent by any key with the `acls` scope; however its validation scales, running it on the
 * thread that answers every network's requests lets one caller stall them all. Here each
 * document is validated (syntax, references, compilation, its own tests) in one of a few worker
 * threads; a validation that outlives its budget has its worker terminated (a fresh one takes
 * its place) and is refused with 422 `policy_too_complex`, so nothing is stored. A worker also
 * has a heap limit, so a document that needs absurd memory is refused the same way instead of
 * taking the process down.
 *
 * The budget counts from the moment a worker takes the document, not from its arrival: time
 * spent queued behind other validations is not held against it. Workers run below the normal
 * priority (policy.worker.mjs), so on a busy machine the request thread gets the CPU first.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ValidationResultBody } from '@warren/contract';
import { ApiError } from '../../core/errors.js';
import type { PreparedPolicy } from './policy-transfer.js';

export interface PolicyPoolOptions {
  /** Worker threads (default 2: validations are rare, and the machine has other work). */
  size?: number;
  /** How long one validation may run before it is refused (ms). */
  budgetMs: number;
  /** Heap a worker may grow to (MiB); past it the validation is refused. */
  maxHeapMb?: number;
}

export type PreparedResult = ValidationResultBody & { prepared?: PreparedPolicy };

interface Job {
  text: string;
  prepare: boolean;
  budgetMs: number;
  resolve: (result: PreparedResult) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  ready: Promise<void>;
  job?: Job & { id: number; timer?: NodeJS.Timeout };
}

export const DEFAULT_POLICY_BUDGET_MS = 1_500;
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
  validate(text: string): Promise<ValidationResultBody> {
    return this.run(text, false).then(({ valid, errors, tests }) => ({ valid, errors, tests }));
  }

  /**
   * validate(), and for a valid text what the worker read (`prepared`): a caller storing the
   * policy builds its indexes from that instead of reading the text again on its own thread.
   * `budgetMs` replaces the pool's budget for this document (a stored policy being loaded).
   */
  prepare(text: string, budgetMs = this.options.budgetMs): Promise<PreparedResult> {
    return this.run(text, true, budgetMs);
  }

  private run(text: string, prepare: boolean, budgetMs = this.options.budgetMs): Promise<PreparedResult> {
    if (this.closed) return Promise.reject(new Error('the policy pool is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ text, prepare, budgetMs, resolve, reject });
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
          slot.job.timer = setTimeout(
            () => this.fail(i, slot, policyTooComplex(`over ${job.budgetMs} ms`)),
            job.budgetMs,
          );
          slot.worker.postMessage({ id, text: job.text, prepare: job.prepare });
        },
        () => {},
      );
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
    worker.on('message', (message: { ready?: true; id?: number } & PreparedResult) => {
      if (message.ready) {
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

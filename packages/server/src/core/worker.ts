/**
 * Background work of one process (sweeps, the detector, the webhook dispatcher). `app.ts`
 * starts each with what it needs — storage, the clock, the settings, a logger — and stops it
 * when the app closes; no worker knows of Fastify.
 */
import type { BaseLogger } from 'pino';

/** The logger a worker writes to (the app's, so lines carry its bindings). */
export type WorkerLog = Pick<BaseLogger, 'info' | 'warn' | 'error'>;

export interface Worker {
  /** Stops the worker; resolves once work in progress has finished. */
  stop(): Promise<void>;
}

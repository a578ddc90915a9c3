/**
 * The background work of events: the detector pass (presence, key expiry, device logins
 * expiring) every few seconds and the retention sweep, which keeps events as long as the plan
 * keeps its logs (and sweeps expired machine logins and SSH checks).
 */
import type { AppContext } from '../../core/context.js';
import { deleteEventsBefore } from '../../core/events.js';
import type { Worker, WorkerLog } from '../../core/worker.js';
import type { Db } from '../../storage/database.js';
import { expireDueLogins } from '../devices/key-expiry.js';
import { pruneMachineLogins } from '../devices/login/machine-logins.repository.js';
import { pruneSshChecks } from '../devices/login/ssh-checks.repository.js';
import { logRetentionDays } from '../network/plans.js';
import { deleteDeliveriesBefore } from '../webhooks/webhooks.repository.js';
import { detectKeyExpiry, detectPresence, forgetGone } from './detector.js';

const DETECT_INTERVAL_MS = 5_000;
const RETENTION_EVERY_MS = 10 * 60_000;
const DAY_MS = 86_400_000;

/** One detector pass; tests call it directly. */
export async function detectTransitions(ctx: Pick<AppContext, 'db' | 'clock'>): Promise<number> {
  return (await detectPresence(ctx)) + (await detectKeyExpiry(ctx)) + (await expireDueLogins(ctx));
}

/**
 * Deletes each network's events (and their deliveries) older than its log retention, and the
 * machine logins and SSH checks no connection or visit can use any more (their tables have no
 * other sweep).
 */
export async function sweepEvents(ctx: Pick<AppContext, 'db' | 'clock' | 'settings'>): Promise<void> {
  const db: Db = ctx.db;
  const now = ctx.clock.now();
  const networks = await db.selectFrom('networks').select(['id', 'plan']).execute();
  for (const network of networks) {
    const cutoff = now - logRetentionDays(network.plan, ctx.settings) * DAY_MS;
    await deleteDeliveriesBefore(db, network.id, cutoff);
    await deleteEventsBefore(db, network.id, cutoff);
  }
  await forgetGone(db);
  await pruneMachineLogins(db, now);
  await pruneSshChecks(db, now);
}

export function startEventWork(ctx: Pick<AppContext, 'db' | 'clock' | 'settings'>, log: WorkerLog): Worker {
  let running: Promise<void> | undefined;
  let lastSweep = 0;
  const pass = async () => {
    await detectTransitions(ctx);
    if (Date.now() - lastSweep >= RETENTION_EVERY_MS) {
      lastSweep = Date.now();
      await sweepEvents(ctx);
    }
  };
  const timer = setInterval(() => {
    if (running) return;
    running = pass()
      .catch((error: unknown) => log.error({ err: error }, 'event detector pass failed'))
      .finally(() => {
        running = undefined;
      });
  }, ctx.settings.eventDetectorIntervalMs ?? DETECT_INTERVAL_MS).unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

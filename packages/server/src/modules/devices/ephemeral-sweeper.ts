/**
 * Ephemeral devices (enrolled with an ephemeral auth key) are removed once they have been
 * offline for EPHEMERAL_OFFLINE_MS: after an explicit disconnect that is counted from the
 * disconnect (which stamps last_seen_at); otherwise from the moment the last heartbeat aged
 * out of the online window. Each removal is audited as `device.expire` in its transaction.
 * On PostgreSQL several instances may sweep at once; each removal checks again under its
 * transaction, so the later one finds nothing left to do.
 */

import type { ExpressionBuilder } from 'kysely';
import { systemActor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import type { Worker, WorkerLog } from '../../core/worker.js';
import type { Database } from '../../storage/schema.js';
import { EPHEMERAL_OFFLINE_MS, onlineSince } from '../network/online.js';
import { deletionEvents, removeDevices } from './device-removal.js';

const SWEEP_INTERVAL_MS = 30_000;
const BATCH = 1000;

/** Ephemeral devices offline for EPHEMERAL_OFFLINE_MS at `now`. */
function expired(eb: ExpressionBuilder<Database, 'devices'>, now: number) {
  return eb.and([
    eb('ephemeral', '=', 1),
    eb.or([
      eb('last_seen_at', '<=', onlineSince(now) - EPHEMERAL_OFFLINE_MS),
      eb.and([eb('disconnected', '<>', 0), eb('last_seen_at', '<=', now - EPHEMERAL_OFFLINE_MS)]),
    ]),
  ]);
}

/**
 * Removes every expired ephemeral device; returns how many. Tests call it directly. Each
 * removal is its own unit of work, which checks again that the device is still expired (a
 * heartbeat may have come, or another instance may have removed it first).
 */
export async function sweepEphemeralDevices(ctx: Pick<AppContext, 'db' | 'clock'>): Promise<number> {
  let total = 0;
  for (;;) {
    const candidates = await ctx.db
      .selectFrom('devices')
      .select(['id', 'network_id'])
      .where((eb) => expired(eb, ctx.clock.now()))
      .limit(BATCH)
      .execute();
    let removed = 0;
    for (const device of candidates) {
      const actor = systemActor(device.network_id, 'ephemeral-sweeper');
      const gone = await unitOfWork(ctx, actor, 'device.expire', async (trx, now, changes) => {
        const still = await trx
          .selectFrom('devices')
          .select('id')
          .where('id', '=', device.id)
          .where((eb) => expired(eb, now))
          .executeTakeFirst();
        if (!still) return { value: false, target: device.id, unchanged: true };
        const events = await deletionEvents(trx, device.network_id, [device.id], now);
        // Another instance may delete it between the check and here: then nothing is recorded.
        if ((await removeDevices(trx, changes, device.network_id, [device.id])) === 0) {
          return { value: false, target: device.id, unchanged: true };
        }
        return { value: true, target: device.id, events };
      });
      if (gone) removed++;
    }
    total += removed;
    if (candidates.length < BATCH || removed === 0) return total;
  }
}

/** Runs the sweep in the background (unref'd) until stopped. */
export function startEphemeralSweeper(ctx: Pick<AppContext, 'db' | 'clock'>, log: WorkerLog): Worker {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepEphemeralDevices(ctx)
      .catch((error) => log.error({ err: error }, 'ephemeral device sweep failed'))
      .finally(() => {
        running = false;
      });
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return { stop: async () => clearInterval(timer) };
}

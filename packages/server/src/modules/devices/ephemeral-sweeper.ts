/**
 * Ephemeral devices (enrolled with an ephemeral auth key) are removed once they have been
 * offline for EPHEMERAL_OFFLINE_MS: after an explicit disconnect that is counted from the
 * disconnect (which stamps last_seen_at); otherwise from the moment the last heartbeat aged
 * out of the online window. Each removal is audited as `device.expire` in its transaction.
 * On PostgreSQL several instances may sweep at once; the advisory lock makes them take turns
 * and the later one finds nothing left to do.
 */
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../../context.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import { removeDevices } from './device-removal.js';
import { EPHEMERAL_OFFLINE_MS, ONLINE_WINDOW_MS } from './presence.js';

const SWEEP_INTERVAL_MS = 30_000;
const BATCH = 1000;

/** Removes every expired ephemeral device; returns how many. Tests call it directly. */
export async function sweepEphemeralDevices(ctx: Pick<AppContext, 'db' | 'clock' | 'audit'>): Promise<number> {
  let total = 0;
  for (;;) {
    const now = ctx.clock.now();
    const removed = await ctx.db.transaction().execute(async (trx) => {
      await advisoryLock(trx, 'ephemeral-sweep');
      const rows = await trx
        .selectFrom('devices')
        .select(['id', 'network_id'])
        .where('ephemeral', '=', 1)
        .where((eb) =>
          eb.or([
            eb('last_seen_at', '<=', now - ONLINE_WINDOW_MS - EPHEMERAL_OFFLINE_MS),
            eb.and([eb('disconnected', '<>', 0), eb('last_seen_at', '<=', now - EPHEMERAL_OFFLINE_MS)]),
          ]),
        )
        .limit(BATCH)
        .execute();
      const byNetwork = new Map<string, string[]>();
      for (const row of rows) byNetwork.set(row.network_id, [...(byNetwork.get(row.network_id) ?? []), row.id]);
      // Every network's devices first, then every audit entry: the `audit` lock comes last.
      for (const [networkId, ids] of byNetwork) await removeDevices(trx, networkId, ids);
      await ctx.audit.recordSystem(
        trx,
        rows.map((row) => ({
          network_id: row.network_id,
          time: now,
          key_id: null,
          key_name: null,
          device_id: row.id,
          method: 'SYSTEM',
          path: `/v1/devices/${row.id}`,
          status: 204,
          client_addr: '',
          request_id: `sweep_${now}`,
          action: 'device.expire',
          target: row.id,
        })),
      );
      return rows.length;
    });
    total += removed;
    if (removed < BATCH) return total;
  }
}

/** Runs the sweep in the background (unref'd) until the app closes. */
export function startEphemeralSweeper(app: FastifyInstance): void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    sweepEphemeralDevices(app.ctx)
      .catch((error) => app.log.error({ err: error }, 'ephemeral device sweep failed'))
      .finally(() => {
        running = false;
      });
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}

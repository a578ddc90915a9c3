/**
 * The presence refresh of devices that hold a connection open (a Tailscale map stream marks its
 * device online every 20 s), written together per network.
 *
 * Refreshed one by one, 10,000 connected devices are 500 commits a second whatever they do:
 * on PostgreSQL each a pooled connection and a WAL flush, on SQLite each a write that ends the
 * kept answers of every read (storage/compiled-query.ts), so the cost of registering one more
 * device grew with the fleet already connected. A refresh of a device that stays online changes
 * nothing anyone follows (no epoch moves), so this process gathers a network's refreshes for
 * up to GATHER_MS (a second of the 60 s online window) and writes them as one UPDATE per
 * MAX_BATCH devices. A device the statement does not match (it is crossing over, or gone)
 * takes the heartbeat's own path, which moves the presence epoch for it.
 */
import type { AppContext } from '../../core/context.js';
import { innerMap } from '../../lib/nested-maps.js';
import type { Db } from '../../storage/database.js';
import { onlineSince, onlineSinceWhere } from '../network/online.js';
import { setPresence } from './presence.service.js';

/** How long a refresh waits for others of its network. */
const GATHER_MS = 1_000;
/** Devices per statement (well inside SQLite's bound parameters). */
const MAX_BATCH = 500;

interface Gathered {
  /** Device id → the callers waiting on its refresh. */
  waiting: Map<string, Array<(stayed: boolean) => void>>;
  failed: Array<(error: unknown) => void>;
}

/** Per database handle (two instances in one process gather apart), per network. */
const gathering = new WeakMap<Db, Map<string, Gathered>>();

/**
 * Marks a connected device online, within GATHER_MS. Resolves to whether it still exists (a
 * deleted device is not brought back).
 */
export async function refreshPresence(ctx: AppContext, networkId: string, deviceId: string): Promise<boolean> {
  if (await gather(ctx, networkId, deviceId)) return true;
  return (await setPresence(ctx, networkId, deviceId, true, ctx.clock.now())) !== undefined;
}

/** Resolves to whether the device stayed online through the gathered write. */
function gather(ctx: AppContext, networkId: string, deviceId: string): Promise<boolean> {
  const ofDb = innerMap(gathering, ctx.db, Map);
  let batch = ofDb.get(networkId);
  if (!batch) {
    const gathered: Gathered = { waiting: new Map(), failed: [] };
    batch = gathered;
    ofDb.set(networkId, gathered);
    setTimeout(() => {
      ofDb.delete(networkId);
      write(ctx, networkId, gathered).catch((error) => {
        for (const fail of gathered.failed) fail(error);
      });
    }, GATHER_MS).unref();
  }
  const target = batch;
  return new Promise((resolve, reject) => {
    const list = target.waiting.get(deviceId) ?? [];
    list.push(resolve);
    target.waiting.set(deviceId, list);
    target.failed.push(reject);
  });
}

async function write(ctx: AppContext, networkId: string, gathered: Gathered): Promise<void> {
  const ids = [...gathered.waiting.keys()];
  for (let at = 0; at < ids.length; at += MAX_BATCH) {
    const slice = ids.slice(at, at + MAX_BATCH);
    const now = ctx.clock.now();
    const kept = await ctx.db
      .updateTable('devices')
      .set({ last_seen_at: now })
      .where('network_id', '=', networkId)
      .where('id', 'in', slice)
      .where((eb) => onlineSinceWhere(eb, onlineSince(now), true))
      .returning('id')
      .execute();
    const stayed = new Set(kept.map((row) => row.id));
    for (const id of slice) for (const resolve of gathered.waiting.get(id)!) resolve(stayed.has(id));
  }
}

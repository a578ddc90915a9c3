/**
 * SQLite: the presence writes of a process's heartbeats, gathered for a few milliseconds and
 * committed in one transaction.
 *
 * Written one by one, each heartbeat was a commit of its own: at 10,000 devices, about 200 a
 * second on the server's one thread, each paying SQLite's lock and log work for one row, and
 * each moving the commit counter that every answer kept until the next commit is checked
 * against (storage/compiled-query.ts), so the network's head and routes that the heartbeat reads
 * next, and the API's kept answers, were read again after nearly every one. Gathered, the
 * fleet's presence costs one commit per batch.
 *
 * The first write after a quiet spell goes at the end of the current turn of the event loop;
 * later ones wait until BATCH_MS after the previous batch, so a lone heartbeat waits for
 * nothing and a busy fleet commits at most 1,000 / BATCH_MS times a second. Every caller is
 * answered once its batch has committed, as when it wrote alone: when a heartbeat is answered,
 * its presence is stored.
 *
 * A disconnect is written at once, as before (a map stream's device is offline as soon as the
 * stream is gone), unless a heartbeat of the same device still waits for its batch: then it
 * follows that heartbeat in the queue, so the device does not come back online after it.
 *
 * A batch keeps its writes in arrival order. Each device either stays as it was at the batch's
 * time (online and still online, or offline and still offline: the common case, a plain update)
 * or crosses over, which moves the network's presence epoch once per batch with every crossing
 * device logged against it, as presence-crossings.ts does for PostgreSQL. Whether a device stays
 * is decided when the batch is written, at the clock's time then, not when the heartbeat
 * arrived: a device whose heartbeat waited while it timed out crosses, so no instance's presence
 * snapshot misses its return.
 */
import { inTransaction } from '../../core/changes.js';
import type { Clock } from '../../lib/time.js';
import { compiledQuery } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { presenceEpoch } from '../network/epochs.js';
import { onlineSince, onlineSinceWhere } from '../network/online.js';
import type { Crossed, Presence } from './presence-crossings.js';

/** How long after a batch the next one may be written. */
export const BATCH_MS = 50;

/**
 * The common case of every heartbeat (and disconnect): the device keeps its presence. Built
 * once per direction (storage/compiled-query.ts): the fleet's heartbeats are the busiest call.
 */
const staysAs = (online: boolean) =>
  compiledQuery((db, p: { id: string; now: number; cutoff: number }) =>
    db
      .updateTable('devices')
      .set({ last_seen_at: p.now, disconnected: online ? 0 : 1 })
      .where('id', '=', p.id)
      .where((eb) => onlineSinceWhere(eb, p.cutoff, online))
      .returning('advertised_routes'),
  );
export const staysOnline = staysAs(true);
export const staysOffline = staysAs(false);

/** A device crossing over: its presence whatever it was. */
const crosses = compiledQuery((db, p: { id: string; networkId: string; lastSeenAt: number; disconnected: number }) =>
  db
    .updateTable('devices')
    .set({ last_seen_at: p.lastSeenAt, disconnected: p.disconnected })
    .where('id', '=', p.id)
    .where('network_id', '=', p.networkId)
    .returning('advertised_routes'),
);

interface Write extends Presence {
  networkId: string;
  deviceId: string;
  clock: Clock;
  resolve(result: Crossed): void;
  reject(error: unknown): void;
}

interface Queue {
  writes: Write[];
  /** The devices of `writes`. */
  devices: Set<string>;
  /** When the last batch was written (performance.now()), or -Infinity. */
  lastBatch: number;
  scheduled: boolean;
}

const queues = new WeakMap<Db, Queue>();

/**
 * Stores the device's presence (`last_seen_at`, `disconnected`) with the next batch. Resolves,
 * once the batch has committed, to the device's advertised routes, or undefined when it is gone.
 */
export function writePresence(
  db: Db,
  clock: Clock,
  networkId: string,
  deviceId: string,
  presence: Presence,
): Promise<Crossed> {
  let queue = queues.get(db);
  if (!queue) {
    queue = { writes: [], devices: new Set(), lastBatch: Number.NEGATIVE_INFINITY, scheduled: false };
    queues.set(db, queue);
  }
  const target = queue;
  return new Promise<Crossed>((resolve, reject) => {
    target.writes.push({ networkId, deviceId, clock, ...presence, resolve, reject });
    target.devices.add(deviceId);
    if (target.scheduled) return;
    target.scheduled = true;
    const wait = target.lastBatch + BATCH_MS - performance.now();
    const write = () => void writeBatch(db, target);
    if (wait > 0) setTimeout(write, wait);
    else setImmediate(write);
  });
}

/** Whether a presence write of the device waits for its batch (a later one must follow it). */
export function presenceQueued(db: Db, deviceId: string): boolean {
  return queues.get(db)?.devices.has(deviceId) ?? false;
}

async function writeBatch(db: Db, queue: Queue): Promise<void> {
  const batch = queue.writes;
  queue.writes = [];
  queue.devices = new Set();
  queue.scheduled = false;
  queue.lastBatch = performance.now();
  const results = new Map<Write, Crossed>();
  try {
    const byNetwork = new Map<string, Write[]>();
    for (const write of batch) {
      const writes = byNetwork.get(write.networkId);
      if (writes) writes.push(write);
      else byNetwork.set(write.networkId, [write]);
    }
    await db.transaction().execute(async (trx) => {
      for (const [networkId, writes] of byNetwork) {
        await inTransaction(trx, networkId, async (t, changes) => {
          const crossed: string[] = [];
          for (const write of writes) {
            const { deviceId: id, last_seen_at: now, disconnected } = write;
            const stays = disconnected ? staysOffline : staysOnline;
            let [row] = await stays(t, { id, now, cutoff: onlineSince(write.clock.now()) });
            if (!row) {
              [row] = await crosses(t, { id, networkId, lastSeenAt: now, disconnected });
              if (row) crossed.push(id);
            }
            results.set(write, row);
          }
          if (crossed.length > 0) await changes.touch(presenceEpoch, crossed);
        });
      }
    });
  } catch (error) {
    for (const write of batch) write.reject(error);
    return;
  }
  for (const write of batch) write.resolve(results.get(write));
}

/**
 * The presence change log (migration 014): per network and presence epoch, which devices the
 * move to that epoch was about. Written by the calls that take a device online or offline (a
 * heartbeat after silence, a disconnect, an enrollment) after the epoch bump and in the same
 * transaction; read by presence-snapshot.ts to follow those devices instead of reading the
 * whole network's presence again. A move that does not log (a user suspended, which takes
 * all of their devices offline) makes the next snapshot a whole read.
 */
import { sql } from 'kysely';
import type { Db } from '../../storage/database.js';
import { epochLog } from './epoch-log.js';

const presenceLog = epochLog('presence_changes', 'presence_epoch');

/** Call after bumpPresenceEpoch (or the enrollment's bump), inside the same transaction. */
export const logPresenceChange = presenceLog.log;

/** The devices whose presence moved after epoch `from` up to `to`, or undefined when not covered. */
export const presenceChangedSince = presenceLog.changedSince;

/**
 * PostgreSQL: a device crosses over (its presence set to `lastSeenAt`/`disconnected`), the
 * network's presence epoch moves and the device is logged against it, in one statement. The
 * epoch's row lock is then held for one statement, not for a transaction of four round trips:
 * with a fleet coming back online, crossings queued on that lock behind transactions whose
 * process was busy elsewhere, until they held 18 of the two instances' 20 connections and
 * every other call waited for one. Returns the device's advertised routes, or undefined when
 * it is gone (then nothing moves).
 */
export async function crossPresencePostgres(
  db: Db,
  networkId: string,
  deviceId: string,
  presence: { last_seen_at: number; disconnected: number },
): Promise<{ advertised_routes: string } | undefined> {
  const { rows } = await sql<{ advertised_routes: string; epoch: number | null }>`
    with crossed as (
      update devices set last_seen_at = ${presence.last_seen_at}, disconnected = ${presence.disconnected}
      where id = ${deviceId} returning advertised_routes
    ), bumped as (
      update networks set presence_epoch = presence_epoch + 1
      where id = ${networkId} and exists (select 1 from crossed) returning presence_epoch
    ), logged as (
      insert into presence_changes (network_id, epoch, device_id)
      select ${networkId}, presence_epoch, ${deviceId} from bumped on conflict do nothing
    )
    select crossed.advertised_routes, (select presence_epoch from bumped) as epoch from crossed`.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  if (row.epoch !== null) await presenceLog.prune(db, networkId, Number(row.epoch));
  return { advertised_routes: row.advertised_routes };
}

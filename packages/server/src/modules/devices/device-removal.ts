/**
 * Removing devices: shared by DELETE /v1/devices/{id}, DELETE /v1/users/{id} and the
 * ephemeral sweeper. Deleting the row revokes the node credential at once (it is looked up
 * by the row), frees the address index, and takes the routes out of every netmap.
 */
import type { Changes } from '../../core/changes.js';
import type { EventDraft } from '../../core/events.js';
import type { Db } from '../../storage/database.js';
import { netmapEpoch } from '../network/epochs.js';
import { deleteRoutesOf } from '../routes/routes.repository.js';
import { deviceDetails } from './device-details.js';

/** Returns how many devices were deleted (ids of other networks or already gone count for nothing). */
export async function removeDevices(
  trx: Db,
  changes: Changes,
  networkId: string,
  deviceIds: readonly string[],
): Promise<number> {
  if (deviceIds.length === 0) return 0;
  // Every remaining device whose view included these must see a new netmap. Declared first, as
  // every netmap-changing transaction takes the network row first (no lock cycles with route rows).
  await changes.touch(netmapEpoch, deviceIds);
  let removed = 0;
  for (let i = 0; i < deviceIds.length; i += 500) {
    const ids = deviceIds.slice(i, i + 500);
    await deleteRoutesOf(trx, networkId, ids);
    await trx.deleteFrom('device_tags').where('network_id', '=', networkId).where('device_id', 'in', ids).execute();
    const result = await trx
      .deleteFrom('devices')
      .where('network_id', '=', networkId)
      .where('id', 'in', ids)
      .executeTakeFirst();
    removed += Number(result.numDeletedRows);
  }
  return removed;
}

/**
 * The `device.deleted` events of devices about to be removed: read before the removal, as an
 * event carries the record as it last was.
 */
export async function deletionEvents(
  trx: Db,
  networkId: string,
  deviceIds: readonly string[],
  now: number,
): Promise<EventDraft[]> {
  const details = await deviceDetails(trx, networkId, deviceIds, now);
  const events: EventDraft[] = [];
  for (const id of deviceIds) {
    const device = details.get(id);
    if (device) events.push({ type: 'device.deleted', data: { device } });
  }
  return events;
}

/**
 * A device's advertised set, as enrollment and heartbeats report it: its routes are made to
 * match the set (routes/routes.repository.ts), and the set's text is kept on the device's row,
 * which every heartbeat compares with what it sends, so an unchanged set costs no route read.
 */
import type { Db } from '../../storage/database.js';
import { advertisedText } from '../routes/prefixes.js';
import { type RouteSync, syncAdvertised } from '../routes/routes.repository.js';

export async function advertise(
  trx: Db,
  networkId: string,
  deviceId: string,
  prefixes: readonly string[],
  now: number,
): Promise<RouteSync> {
  const routes = await syncAdvertised(trx, networkId, deviceId, prefixes, now);
  await trx
    .updateTable('devices')
    .set({ advertised_routes: advertisedText(prefixes) })
    .where('id', '=', deviceId)
    .execute();
  return routes;
}

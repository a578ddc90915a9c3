/**
 * Detail records (`GET /v1/devices/{id}`, `?fields=all`, enrollment, events): a device row
 * with its routes. Read by set, so records for many devices (a user's removal, the event
 * detector) cost the same few queries as one.
 */
import type { DeviceBody } from '@warren/contract';
import { notFound } from '../../core/errors.js';
import { keptDerivation } from '../../lib/kept.js';
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { notForIndex } from '../../storage/planner.js';
import { isOnline, onlineUntil } from '../network/online.js';
import type { RouteRow } from '../routes/routes.repository.js';
import { presentDeviceDetail } from './devices.presenter.js';
import { type DeviceRow, deviceRows, devicesByIds, routesOfDevice, routesOfDevices } from './devices.repository.js';

/** Detail records of the given devices by id; ids of other networks or gone devices are absent. */
export async function deviceDetails(
  db: Db,
  networkId: string,
  ids: readonly string[],
  now: number,
): Promise<Map<string, DeviceBody>> {
  if (ids.length === 0) return new Map();
  const [rows, routes] = await Promise.all([
    devicesByIds(db, networkId, ids),
    routesOfDevices(db, networkId, now, ids),
  ]);
  const byDevice = groupByDevice(routes);
  return new Map(rows.map((row) => [row.id, presentDeviceDetail(row, now, byDevice.get(row.id) ?? [])]));
}

/**
 * One device by id, built once (storage/compiled-query.ts): `GET /v1/devices/{id}` and
 * `/api/v2`'s device reads spent more on building their two queries than on answering them. What
 * it shows of the device, its owner and its network moves the device list stamp, so on
 * PostgreSQL it is kept per stamps.
 */
const deviceById = compiledQuery(
  (db, p: { networkId: string; id: string }) =>
    deviceRows(db.selectFrom('devices'))
      .where(notForIndex(db, 'devices.network_id'), '=', p.networkId)
      .where('devices.id', '=', p.id),
  { stampedBy: 'networkId', readsDevices: true },
);

/**
 * A detail record presented once per kept row and routes (lib/kept.ts): its `online` follows the
 * clock, so it holds until the device times out; the routes' primaries are the routes query's
 * own window (devices.repository.ts), a new answer when it passes.
 */
const keptDetail = keptDerivation(([row, routes]: readonly [DeviceRow, readonly RouteRow[]], now: number) => ({
  value: presentDeviceDetail(row, now, routes),
  until: isOnline(row, now) ? onlineUntil(row.last_seen_at as number) : Number.POSITIVE_INFINITY,
}));

/** One device's detail record; 404 when the network has no such device. */
export async function deviceDetail(
  db: Db,
  networkId: string,
  id: string,
  now: number,
  stamp?: ReadStamp,
): Promise<DeviceBody> {
  const [rows, routes] = await Promise.all([
    deviceById(db, { networkId, id }, stamp),
    routesOfDevice(db, networkId, now, id, stamp),
  ]);
  const row = rows[0];
  if (!row) throw notFound(`device ${id} does not exist`);
  return keptDetail([row, routes], now);
}

export function groupByDevice(routes: readonly RouteRow[]): Map<string, RouteRow[]> {
  const byDevice = new Map<string, RouteRow[]>();
  for (const route of routes) {
    const list = byDevice.get(route.device_id);
    if (list) list.push(route);
    else byDevice.set(route.device_id, [route]);
  }
  return byDevice;
}

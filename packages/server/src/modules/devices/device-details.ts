/**
 * Detail records (`GET /v1/devices/{id}`, `?fields=all`, enrollment, events): a device row
 * with its routes. Read by set, so records for many devices (a user's removal, the event
 * detector) cost the same few queries as one.
 */
import type { DeviceBody } from '@warren/contract';
import { notFound } from '../../core/errors.js';
import { keptDerivation } from '../../lib/kept.js';
import { isoOrNull } from '../../lib/time.js';
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { notForIndex } from '../../storage/planner.js';
import { isOnline, onlineUntil } from '../network/online.js';
import type { RouteRow } from '../routes/routes.repository.js';
import { type DeviceDetailRecord, presentDeviceDetail } from './devices.presenter.js';
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
 * `/api/v2`'s device reads spent more on building their two queries than on answering them. On
 * PostgreSQL it is kept per read stamp and device record stamp (migration 044), which an
 * ordinary heartbeat does not move: its presence may then be older than the call, and is taken
 * from presenceById instead.
 */
const deviceById = compiledQuery(
  (db, p: { networkId: string; id: string }) =>
    deviceRows(db.selectFrom('devices'))
      .where(notForIndex(db, 'devices.network_id'), '=', p.networkId)
      .where('devices.id', '=', p.id),
  { stampedBy: 'networkId', readsDevices: true, readsRecords: true, name: 'device-by-id' },
);

/**
 * The device's presence, kept per device list stamp, which every heartbeat moves: what a record
 * kept per record stamp shows of the clock (`online`, `lastSeen`), two columns of one row.
 */
const presenceById = compiledQuery(
  (db, p: { networkId: string; id: string }) =>
    db
      .selectFrom('devices')
      .select(['devices.last_seen_at', 'devices.disconnected'])
      .where(notForIndex(db, 'devices.network_id'), '=', p.networkId)
      .where('devices.id', '=', p.id),
  { stampedBy: 'networkId', readsDevices: true, name: 'device-presence' },
);

type Presence = Pick<DeviceRow, 'last_seen_at' | 'disconnected'>;

/**
 * A detail record presented once per kept row and routes (lib/kept.ts): its `online` follows the
 * clock, so it holds until the device times out; the routes' primaries are the routes query's
 * own window (devices.repository.ts), a new answer when it passes.
 */
const keptDetail = keptDerivation(([row, routes]: readonly [DeviceRow, readonly RouteRow[]], now: number) => ({
  value: presentDeviceDetail(row, now, routes),
  until: isOnline(row, now) ? onlineUntil(row.last_seen_at as number) : Number.POSITIVE_INFINITY,
}));

/** A kept record with the presence read for the call (the record itself when it agrees). */
const withPresence = keptDerivation(([record, presence]: readonly [DeviceDetailRecord, Presence], now: number) => {
  const online = isOnline(presence, now);
  const lastSeen = isoOrNull(presence.last_seen_at);
  return {
    value: record.online === online && record.lastSeen === lastSeen ? record : { ...record, online, lastSeen },
    until: online ? onlineUntil(presence.last_seen_at as number) : Number.POSITIVE_INFINITY,
  };
});

/** One device's detail record; 404 when the network has no such device. */
export async function deviceDetail(
  db: Db,
  networkId: string,
  id: string,
  now: number,
  stamp?: ReadStamp,
): Promise<DeviceBody> {
  // Kept per record stamp only where the call brings one; else the row's presence is current.
  const apart = stamp?.records !== undefined;
  const [rows, routes, presence] = await Promise.all([
    deviceById(db, { networkId, id }, stamp),
    routesOfDevice(db, networkId, now, id, stamp),
    apart ? presenceById(db, { networkId, id }, stamp) : undefined,
  ]);
  const row = rows[0];
  if (!row) throw notFound(`device ${id} does not exist`);
  const record = keptDetail([row, routes], now);
  if (!presence) return record;
  // Gone since the record was kept: the record stamp has moved too, but this call's may not.
  if (!presence[0]) throw notFound(`device ${id} does not exist`);
  return withPresence([record, presence[0]], now);
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

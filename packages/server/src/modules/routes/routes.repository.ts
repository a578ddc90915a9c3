/**
 * SQL of routes, and the home of the primary-route rule (primaryFlag), which route listings,
 * device records and netmaps all read from here.
 */
import { type ExpressionBuilder, sql } from 'kysely';
import { newId } from '../../lib/ids.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import { compiledShapes, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { notForIndex } from '../../storage/planner.js';
import type { Database } from '../../storage/schema.js';
import { onlineSince, onlineSinceWhere } from '../network/online.js';
import { onRoutesAdvertised } from './route-hooks.js';

/**
 * A network's routes joined to their devices: the base of every route query, here and in
 * netmaps. `byDevice` when the caller names the devices: their routes are then found through
 * (device_id, prefix), not by walking the network's routes (storage/planner.ts).
 */
export function networkRoutes(db: Db, networkId: string, byDevice = false) {
  return db
    .selectFrom('routes')
    .innerJoin('devices', 'devices.id', 'routes.device_id')
    .where(byDevice ? notForIndex(db, 'routes.network_id') : sql.ref('routes.network_id'), '=', networkId);
}

/**
 * 1 when the route is primary, else 0. Among the routes of one prefix that are approved,
 * advertised and whose device is online (presence.ts) and in netmaps, the earliest approved (approved_at, then
 * id) is primary. Default routes (0.0.0.0/0, ::/0) are not shared by failover: every online exit
 * node is in service, so each of them is primary. The correlated NOT EXISTS runs on
 * routes_network_prefix; its own `devices` hides the outer one, so the one online rule reads
 * the competitor's device there and the route's own device outside. The online cutoff
 * (`onlineSince(now)`) is taken as a value, so queries built once can bind it.
 */
export function primaryFlag(eb: ExpressionBuilder<Database, 'routes' | 'devices'>, cutoff: number) {
  // A device waiting for approval or whose login expired serves no one (devices/standing.ts).
  const online = eb.and([
    onlineSinceWhere(eb, cutoff, true),
    eb('devices.authorized', '=', 1),
    eb('devices.key_expired', '=', 0),
  ]);
  return sql<number>`case when routes.state = 'approved' and routes.advertised = 1 and ${online}
      and (routes.prefix in ('0.0.0.0/0', '::/0') or not exists (
        select 1 from routes r2 inner join devices on devices.id = r2.device_id
        where r2.network_id = routes.network_id and r2.prefix = routes.prefix and r2.state = 'approved'
          and r2.advertised = 1 and ${online}
          and (r2.approved_at < routes.approved_at or (r2.approved_at = routes.approved_at and r2.id < routes.id))
      )) then 1 else 0 end`;
}

/**
 * The first online cutoff at which primaryFlag of the route could change with nothing written:
 * the earliest heartbeat (`last_seen_at`) among the devices online at `cutoff` that serve an
 * approved, advertised route of the same prefix (the route's own device among them), null when
 * none is online. Its primary flag follows only those devices' presence until then. A superset
 * of the devices the rule counts (approval and login expiry are left out), so never late.
 */
export function primaryChangesAt(cutoff: number) {
  return sql<number | null>`(select min(d3.last_seen_at) from routes r3 inner join devices d3 on d3.id = r3.device_id
      where r3.network_id = routes.network_id and r3.prefix = routes.prefix and r3.state = 'approved'
        and r3.advertised = 1 and d3.disconnected = 0 and d3.last_seen_at > ${cutoff})`;
}

export function routesWithPrimary(db: Db, networkId: string, now: number) {
  return routesWithPrimarySince(db, networkId, onlineSince(now));
}

/** routesWithPrimary with the online cutoff given, for queries built once; `byDevice` as networkRoutes. */
export function routesWithPrimarySince(db: Db, networkId: string, cutoff: number, byDevice = false) {
  return networkRoutes(db, networkId, byDevice).select((eb) => [
    'routes.id',
    'routes.device_id',
    'devices.name as device_name',
    'routes.prefix',
    'routes.state',
    'routes.advertised',
    'routes.auto_approved',
    'routes.approved_at',
    'routes.approved_by',
    'routes.created_at',
    primaryFlag(eb, cutoff).as('is_primary'),
  ]);
}

export type RouteRow = Awaited<ReturnType<ReturnType<typeof routesWithPrimary>['executeTakeFirstOrThrow']>>;

/**
 * The route list, built once per filter shape (storage/compiled-query.ts), with the online
 * cutoff bound as a value; kept across the clock until a primary flag can change
 * (primaryChangesAt), as a device's routes are.
 */
const routesOf = compiledShapes(
  (filter: { state: boolean; device: boolean }) => `${filter.state}:${filter.device}`,
  (filter) => (db, p: Record<string, string | number>) => {
    let query = routesWithPrimarySince(db, p.networkId as string, p.cutoff as number);
    if (filter.state) query = query.where('routes.state', '=', p.state as string);
    if (filter.device)
      query = query.where((eb) =>
        eb.or([eb('devices.id', '=', p.device as string), eb('devices.name', '=', p.device as string)]),
      );
    return query
      .select(primaryChangesAt(p.cutoff as number).as('primary_changes_at'))
      .orderBy('routes.created_at')
      .orderBy('routes.id');
  },
  // Routes move the read stamp (migration 034); device names and the presence crossings,
  // approval and expiry that decide primaries the device record stamp (migration 044).
  {
    window: { param: 'cutoff', until: firstPrimaryChange },
    stampedBy: 'networkId',
    readsDevices: true,
    readsRecords: true,
    name: 'routes-list',
  },
);

/** The first cutoff at which a primary flag of `rows` (read with primaryChangesAt) can change. */
export function firstPrimaryChange(rows: readonly { primary_changes_at: number | null }[]): number {
  let first = Number.POSITIVE_INFINITY;
  for (const row of rows) if (row.primary_changes_at != null) first = Math.min(first, Number(row.primary_changes_at));
  return first;
}

export async function listRoutes(
  db: Db,
  networkId: string,
  now: number,
  filter: { state?: string; device?: string },
  stamp?: ReadStamp,
): Promise<RouteRow[]> {
  const params: Record<string, string | number> = { networkId, cutoff: onlineSince(now) };
  if (filter.state) params.state = filter.state;
  if (filter.device !== undefined) params.device = filter.device;
  return routesOf({ state: Boolean(filter.state), device: filter.device !== undefined })(db, params, stamp);
}

export async function findRoute(db: Db, networkId: string, now: number, id: string): Promise<RouteRow | undefined> {
  return routesWithPrimary(db, networkId, now).where('routes.id', '=', id).executeTakeFirst();
}

/**
 * Makes a device's routes match the set it advertises: new prefixes become pending routes,
 * known ones keep their state and get `advertised` set to whether they are in the set.
 * The caller touches the netmap epoch first (so every transaction takes the network row before
 * route rows) and keeps the set's text on the device's row (devices/advertised-routes.ts).
 */
export async function syncAdvertised(
  trx: Db,
  networkId: string,
  deviceId: string,
  prefixes: readonly string[],
  now: number,
): Promise<RouteSync> {
  await advisoryLock(trx, `routes:${deviceId}`);
  const existing = await trx
    .selectFrom('routes')
    .select(['id', 'prefix', 'advertised'])
    .where('device_id', '=', deviceId)
    .execute();
  const wanted = new Set(prefixes);
  const known = new Set(existing.map((r) => r.prefix));
  const readvertised = existing.filter((r) => r.advertised === 0 && wanted.has(r.prefix)).map((r) => r.id);
  const withdrawn = existing.filter((r) => r.advertised !== 0 && !wanted.has(r.prefix)).map((r) => r.id);
  const added = prefixes
    .filter((p) => !known.has(p))
    .map((prefix) => ({
      id: newId('route'),
      network_id: networkId,
      device_id: deviceId,
      prefix,
      state: 'pending',
      advertised: 1,
      auto_approved: 0,
      approved_at: null,
      approved_by: null,
      created_at: now,
    }));
  if (readvertised.length)
    await trx.updateTable('routes').set({ advertised: 1 }).where('id', 'in', readvertised).execute();
  if (withdrawn.length) await trx.updateTable('routes').set({ advertised: 0 }).where('id', 'in', withdrawn).execute();
  if (added.length) await trx.insertInto('routes').values(added).execute();
  const approved = added.length
    ? await onRoutesAdvertised(
        trx,
        networkId,
        deviceId,
        added.map((r) => r.id),
        now,
      )
    : [];
  return { advertised: [...readvertised, ...added.map((r) => r.id)], approved: approved.map((a) => a.routeId) };
}

/** What syncAdvertised did: routes (newly or again) advertised, and those the policy approved at once. */
export interface RouteSync {
  advertised: string[];
  approved: string[];
}

/** Deletes the routes of devices being removed (devices/device-removal.ts), in their transaction. */
export async function deleteRoutesOf(trx: Db, networkId: string, deviceIds: readonly string[]): Promise<void> {
  await trx.deleteFrom('routes').where('network_id', '=', networkId).where('device_id', 'in', deviceIds).execute();
}

/**
 * SQL of netmaps. Every query here is indexed and sized by its answer: the network's netmap
 * epoch and current policy version (one row), the approved routes (for primaries), the
 * requesting device, and the presence of its peers.
 */
import { sql } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import type { PolicyRole, PolicyUser } from '../../policy/index.js';
import { compiledQuery } from '../../storage/compiled-query.js';
import { type Db, isPostgres } from '../../storage/database.js';
import { notForIndex } from '../../storage/planner.js';
import { type DeviceRow, deviceRoutesQuery, deviceRows } from '../devices/devices.repository.js';
import { onlineSince, onlineWhere } from '../network/online.js';
import {
  firstPrimaryChange,
  networkRoutes,
  primaryChangesAt,
  primaryFlag,
  type RouteRow,
} from '../routes/routes.repository.js';

export interface NetmapHead {
  epoch: number;
  policyVersion: number;
  policyEtag: string;
  presenceEpoch: number;
}

/**
 * The netmap epoch and the current policy's version and ETag, which key the cached peer map,
 * and the presence epoch, which keys the presence snapshot.
 */
const headQuery = (db: Db, p: { networkId: string }) =>
  db
    .selectFrom('networks')
    .innerJoin('policies', 'policies.network_id', 'networks.id')
    .select(['networks.netmap_epoch', 'networks.presence_epoch', 'policies.version', 'policies.etag'])
    .where('networks.id', '=', p.networkId)
    .orderBy('policies.version', 'desc')
    .limit(1);
/** Read on every heartbeat and netmap on SQLite, so built once (storage/compiled-query.ts). */
const headOf = compiledQuery(headQuery);

type HeadRow = { netmap_epoch: number; presence_epoch: number; version: number; etag: string };
const headFrom = (row: HeadRow): NetmapHead => ({
  epoch: Number(row.netmap_epoch),
  policyVersion: Number(row.version),
  policyEtag: row.etag,
  presenceEpoch: Number(row.presence_epoch),
});

export async function netmapHead(db: Db, networkId: string): Promise<NetmapHead | undefined> {
  const [row] = await headOf(db, { networkId });
  return row && headFrom(row);
}

/** The users of these logins, as the policy sees them (a patched view meeting new owners). */
export async function usersNamed(db: Db, networkId: string, logins: readonly string[]): Promise<PolicyUser[]> {
  const rows = await db
    .selectFrom('users')
    .select(['login_name', 'role'])
    .where('network_id', '=', networkId)
    .where('login_name', 'in', logins)
    .execute();
  return rows.map((r) => ({ login: r.login_name, role: r.role as PolicyRole }));
}

export interface ServedRouteRow {
  id: string;
  device_id: string;
  prefix: string;
  /** 1 when the route is primary now (routes.repository.ts primaryFlag), else 0. */
  is_primary: number;
}

/** Approved, advertised routes, each with whether it is primary now, for choosing primaries. */
const servedQuery = (db: Db, p: { networkId: string; cutoff: number }) =>
  networkRoutes(db, p.networkId)
    .select((eb) => ['routes.id', 'routes.device_id', 'routes.prefix', primaryFlag(eb, p.cutoff).as('is_primary')])
    .where('routes.state', '=', 'approved')
    .where('routes.advertised', '=', 1);
const servedOf = compiledQuery(servedQuery);

/**
 * SQLite: the same, kept across the clock until a primary flag can change with nothing written
 * (routes.repository.ts primaryChangesAt), as the route list is, and until the next commit.
 * Every heartbeat reads it; with one router per hundred devices sharing a prefix, each read
 * weighed every router of the prefix against every other (the primary rule's NOT EXISTS).
 */
const servedKeptOf = compiledQuery(
  (db: Db, p: { networkId: string; cutoff: number }) =>
    servedQuery(db, p).select(primaryChangesAt(p.cutoff).as('primary_changes_at')),
  { window: { param: 'cutoff', until: firstPrimaryChange } },
);

export async function servedRoutes(db: Db, networkId: string, now: number): Promise<ServedRouteRow[]> {
  return (isPostgres(db) ? servedOf : servedKeptOf)(db, { networkId, cutoff: onlineSince(now) });
}

export type SelfRow = DeviceRow & { netmap_version: number; netmap_hash: string | null };

const selfQuery = (db: Db, p: { networkId: string; deviceId: string }) =>
  deviceRows(db.selectFrom('devices'))
    .select(['devices.netmap_version', 'devices.netmap_hash'])
    .where('devices.network_id', '=', p.networkId)
    .where('devices.id', '=', p.deviceId);
const selfOf = compiledQuery(selfQuery);

export async function selfRow(db: Db, networkId: string, deviceId: string): Promise<SelfRow | undefined> {
  return (await selfOf(db, { networkId, deviceId }))[0];
}

/** What a heartbeat or a netmap reads of the database before any cache (netmap.service.ts). */
export interface ViewRows {
  head: NetmapHead;
  served: ServedRouteRow[];
  self: SelfRow;
  /** The device's own routes, when read with the rest (PostgreSQL); else read when needed. */
  ownRoutes?: RouteRow[];
}

/**
 * PostgreSQL: the head, the served routes, the device and its routes in one statement, the
 * lists as JSON. Separately they were four round trips on every heartbeat, three of them on
 * connections of their own, each queued for one under a fleet's load. JSON carries these
 * columns' values as they are (text, and numbers that bigint already arrives as).
 */
const viewRowsOf = compiledQuery((db, p: { networkId: string; deviceId: string; cutoff: number }) =>
  headQuery(db, p).select([
    jsonArrayFrom(servedQuery(db, p)).as('served'),
    jsonObjectFrom(selfQuery(db, p)).as('self'),
    jsonArrayFrom(deviceRoutesQuery(db, p)).as('own_routes'),
  ]),
);

/** Everything ViewRows holds, or undefined when the network or the device is gone. */
export async function viewRows(
  db: Db,
  networkId: string,
  deviceId: string,
  now: number,
): Promise<ViewRows | undefined> {
  const cutoff = onlineSince(now);
  if (isPostgres(db)) {
    const [row] = await viewRowsOf(db, { networkId, deviceId, cutoff });
    if (!row?.self) return undefined;
    return { head: headFrom(row), served: row.served, self: row.self as SelfRow, ownRoutes: row.own_routes };
  }
  // SQLite answers each in microseconds, in this process.
  const [head, served, self] = await Promise.all([
    netmapHead(db, networkId),
    servedKeptOf(db, { networkId, cutoff }),
    selfRow(db, networkId, deviceId),
  ]);
  return head && self && { head, served, self };
}

// Presence is read as one concatenated string rather than a row per device: materializing
// thousands of rows costs far more than the index lookups behind them.
const seenList = (db: Db) =>
  isPostgres(db)
    ? sql<string | null>`string_agg(id || ':' || last_seen_at::text, ',')`
    : sql<string | null>`group_concat(id || ':' || last_seen_at, ',')`;

/** Device ids are server-made (`[a-z0-9_]`), so `id:lastSeen,…` splits back unambiguously. */
function parseSeen(text: string | null | undefined): Map<string, number> {
  const seen = new Map<string, number>();
  if (!text) return seen;
  for (const item of text.split(',')) {
    const colon = item.lastIndexOf(':');
    seen.set(item.slice(0, colon), Number(item.slice(colon + 1)));
  }
  return seen;
}

/**
 * Every online device of the network with its last heartbeat (on SQLite by the index
 * devices_network_seen; PostgreSQL reads the network's devices, migration 017).
 */
export async function onlineDevices(db: Db, networkId: string, now: number): Promise<Map<string, number>> {
  const row = await db
    .selectFrom('devices')
    .select(seenList(db).as('seen'))
    .where('network_id', '=', networkId)
    .where((eb) => onlineWhere(eb, now, true))
    .executeTakeFirst();
  return parseSeen(row?.seen);
}

/**
 * Which of `ids` are online now, with their last heartbeat; a deleted one is simply absent.
 * Looked up by primary key (storage/planner.ts): SQLite chose devices_network_seen otherwise and
 * walked every online device of the network (8–10 ms at 10,000) to find a handful.
 */
export async function onlineAmong(
  db: Db,
  networkId: string,
  ids: readonly string[],
  now: number,
): Promise<Map<string, number>> {
  const seen = new Map<string, number>();
  for (let start = 0; start < ids.length; start += 500) {
    const row = await db
      .selectFrom('devices')
      .select(seenList(db).as('seen'))
      .where(notForIndex(db, 'network_id'), '=', networkId)
      .where('id', 'in', ids.slice(start, start + 500))
      .where((eb) => onlineWhere(eb, now, true))
      .executeTakeFirst();
    for (const [id, at] of parseSeen(row?.seen)) seen.set(id, at);
  }
  return seen;
}
/** Whether any of these devices has an approved route (its presence can move primary routers). */
export async function servesRoutes(db: Db, networkId: string, deviceIds: readonly string[]): Promise<boolean> {
  if (deviceIds.length === 0) return false;
  const row = await db
    .selectFrom('routes')
    .select('id')
    .where('network_id', '=', networkId)
    .where('state', '=', 'approved')
    .where('device_id', 'in', deviceIds)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * SQL of devices. Every filter is a SQL condition on indexed columns (tags through
 * device_tags; presence through last_seen_at), so a list never loads rows it drops, and the
 * routes of a whole page come from one query.
 *
 * With tags, the query is driven from device_tags by the rarest requested tag (a CROSS JOIN,
 * which SQLite keeps in the written order) and every other tag is one EXISTS probe of the
 * device_tags primary key: the cost follows the smallest tag set, not the network's size.
 * Which tag is rarest is found with capped counts (at most RARITY_CAP index steps per tag);
 * SQLite's planner has no per-value statistics to find it, PostgreSQL's is free to reorder.
 */
import type { ExpressionBuilder, Selectable, SelectQueryBuilder } from 'kysely';
import { listText } from '../../lib/json.js';
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { notForIndex } from '../../storage/planner.js';
import type { Database, DevicesTable } from '../../storage/schema.js';
import { onlineSince, onlineWhere } from '../network/online.js';
import {
  firstPrimaryChange,
  primaryChangesAt,
  type RouteRow,
  routesWithPrimarySince,
} from '../routes/routes.repository.js';

export interface DeviceFilter {
  /** User id or login name. */
  user?: string;
  /** Every one must be on the device. */
  tags?: readonly string[];
  online?: boolean;
  /** The tag whose rows drive the query (see drivingTag); the other tags become EXISTS probes. */
  driver?: string;
  /** A search: names containing this text (name characters only), or the device at an address. */
  search?: { nameContains?: string; addrIndex?: number };
}

const RARITY_CAP = 1000;

export type DeviceRow = Pick<
  Selectable<DevicesTable>,
  | 'id'
  | 'name'
  | 'hostname'
  | 'os'
  | 'user_id'
  | 'tags'
  | 'addr_index'
  | 'client_version'
  | 'key_id'
  | 'ephemeral'
  | 'created_at'
  | 'last_seen_at'
  | 'disconnected'
  | 'expires_at'
  | 'authorized'
  | 'key_expiry_disabled'
  | 'key_expired'
  | 'protocol'
  | 'node_key'
  | 'ssh_enabled'
  | 'machine_key'
> & { user_login: string | null; network_name: string; network_dns_domain: string | null };

type DeviceEb = ExpressionBuilder<Database, 'devices'>;

function filterConditions(eb: DeviceEb, networkId: string, now: number, filter: DeviceFilter) {
  const conditions = [eb('devices.network_id', '=', networkId)];
  if (filter.user !== undefined) {
    const user = filter.user;
    conditions.push(
      eb(
        'devices.user_id',
        'in',
        eb
          .selectFrom('users')
          .select('users.id')
          .where('users.network_id', '=', networkId)
          .where((u) => u.or([u('users.id', '=', user), u('users.login_name', '=', user)])),
      ),
    );
  }
  for (const tag of filter.tags ?? []) {
    if (tag === filter.driver) continue;
    conditions.push(
      eb.exists(
        eb
          .selectFrom('device_tags')
          .select('device_tags.device_id')
          .where('device_tags.network_id', '=', networkId)
          .where('device_tags.tag', '=', tag)
          .whereRef('device_tags.device_id', '=', 'devices.id'),
      ),
    );
  }
  if (filter.online !== undefined) conditions.push(onlineWhere(eb, now, filter.online));
  if (filter.search) conditions.push(searchWhere(eb, filter.search));
  return eb.and(conditions);
}

/**
 * Names containing the text (a LIKE: a scan of the network's names, a few milliseconds at the
 * sizes a person searches), or the device at an address (the unique (network_id, addr_index)
 * index). The text holds only name characters, so it carries no LIKE wildcard.
 */
function searchWhere(eb: DeviceEb, search: NonNullable<DeviceFilter['search']>) {
  const matches = [];
  if (search.nameContains !== undefined) matches.push(eb('devices.name', 'like', `%${search.nameContains}%`));
  if (search.addrIndex !== undefined) matches.push(eb('devices.addr_index', '=', search.addrIndex));
  return eb.or(matches);
}

/**
 * The tag with the fewest devices, or the only one. Every tag is first counted up to a small
 * cap, so a tag that every device carries costs a few index steps, not a thousand; only when
 * several tags reach it are those counted again up to RARITY_CAP.
 */
export async function drivingTag(db: Db, networkId: string, tags: readonly string[]): Promise<string | undefined> {
  if (tags.length <= 1) return tags[0];
  const rarest = async (candidates: readonly string[], cap: number) => {
    const counts = await Promise.all(
      candidates.map(async (tag) => ({ tag, n: await countTag(db, networkId, tag, cap) })),
    );
    const fewest = Math.min(...counts.map((c) => c.n));
    return counts.filter((c) => c.n === fewest).map((c) => ({ ...c, capped: fewest === cap }));
  };
  const first = await rarest(tags, FIRST_CAP);
  if (first.length === 1 || !first[0]!.capped) return first[0]!.tag;
  return (
    await rarest(
      first.map((c) => c.tag),
      RARITY_CAP,
    )
  )[0]!.tag;
}

const FIRST_CAP = 64;

/** Devices carrying `tag`, counted up to `cap` index steps. */
async function countTag(db: Db, networkId: string, tag: string, cap: number): Promise<number> {
  const row = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('device_tags')
        .select('device_id')
        .where('network_id', '=', networkId)
        .where('tag', '=', tag)
        .limit(cap)
        .as('capped'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** `devices`, driven from the driving tag's rows when there is one, with every filter applied. */
function filtered(db: Db, networkId: string, now: number, filter: DeviceFilter) {
  const from = filter.driver
    ? db
        .selectFrom('device_tags as t0')
        .crossJoin('devices')
        .whereRef('devices.id', '=', 't0.device_id')
        .where('t0.network_id', '=', networkId)
        .where('t0.tag', '=', filter.driver)
    : db.selectFrom('devices');
  return (from as unknown as SelectQueryBuilder<Database, 'devices', object>).where((eb) =>
    filterConditions(eb, networkId, now, filter),
  );
}

/** The columns every device record is presented from, with the owner's login name. */
export function deviceRows(query: SelectQueryBuilder<Database, 'devices', object>) {
  return query
    .leftJoin('users', 'users.id', 'devices.user_id')
    .innerJoin('networks', 'networks.id', 'devices.network_id')
    .select([
      'devices.id',
      'devices.name',
      'devices.hostname',
      'devices.os',
      'devices.user_id',
      'devices.tags',
      'devices.addr_index',
      'devices.client_version',
      'devices.key_id',
      'devices.ephemeral',
      'devices.created_at',
      'devices.last_seen_at',
      'devices.disconnected',
      'devices.expires_at',
      'devices.authorized',
      'devices.key_expiry_disabled',
      'devices.key_expired',
      'devices.protocol',
      'devices.node_key',
      'devices.machine_key',
      'devices.ssh_enabled',
      'users.login_name as user_login',
      'networks.name as network_name',
      'networks.dns_domain as network_dns_domain',
    ]);
}

/** The list query, unexecuted (the benchmark prints its plan). */
export function listDevicesQuery(db: Db, networkId: string, now: number, filter: DeviceFilter) {
  return deviceRows(filtered(db, networkId, now, filter))
    .orderBy('devices.created_at')
    .orderBy('devices.id');
}

export async function listDevices(db: Db, networkId: string, now: number, filter: DeviceFilter): Promise<DeviceRow[]> {
  return listDevicesQuery(db, networkId, now, filter).execute();
}

/**
 * One page of the list in name order (names are unique in a network, so the last name is the
 * keyset cursor and the (network_id, name) index serves the order), and how many devices the
 * filter selects in all.
 */
export async function readDevicesPage(
  db: Db,
  networkId: string,
  now: number,
  filter: DeviceFilter,
  page: { afterName?: string; limit: number },
): Promise<{ rows: DeviceRow[]; total: number }> {
  let query = deviceRows(filtered(db, networkId, now, filter));
  if (page.afterName !== undefined) query = query.where('devices.name', '>', page.afterName);
  const [rows, count] = await Promise.all([
    query.orderBy('devices.name').limit(page.limit).execute(),
    filtered(db, networkId, now, filter)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.n) };
}

/** What a list needs to tell a kept record from a stale one: the version and the presence. */
export type DeviceStamp = Pick<Selectable<DevicesTable>, 'id' | 'record_version' | 'last_seen_at' | 'disconnected'>;

/** The list, as stamps only: no text column but the id is read (see device-records.ts). */
export async function listDeviceStamps(
  db: Db,
  networkId: string,
  now: number,
  filter: DeviceFilter,
): Promise<DeviceStamp[]> {
  return filtered(db, networkId, now, filter)
    .select(['devices.id', 'devices.record_version', 'devices.last_seen_at', 'devices.disconnected'])
    .orderBy('devices.created_at')
    .orderBy('devices.id')
    .execute();
}

/**
 * The oldest heartbeat among the online devices the filter selects (its presence filter set
 * aside), or null: the first of them to time out. An `online=false` list gains that device then,
 * with nothing written; one aggregate instead of the online devices' rows.
 */
export async function oldestOnlineSeen(
  db: Db,
  networkId: string,
  now: number,
  filter: DeviceFilter,
): Promise<number | null> {
  const row = await filtered(db, networkId, now, { ...filter, online: true })
    .select((eb) => eb.fn.min('devices.last_seen_at').as('seen'))
    .executeTakeFirst();
  return row?.seen == null ? null : Number(row.seen);
}

/**
 * The network's device cursor (`head_seq`, `head_removals`) and route counter (`head_routes`,
 * migration 038) with every device changed after `since`, in one statement so all come from the
 * same snapshot; the network's row comes back
 * alone (device columns null) when nothing changed, and nothing at all when the network is
 * gone. SQLite only: the cursor is kept by migration 012's triggers (device-index.ts).
 */
export const deviceChangesSince = compiledQuery((db, p: { networkId: string; since: number }) =>
  db
    .selectFrom('networks')
    .leftJoin('devices', (join) =>
      join.onRef('devices.network_id', '=', 'networks.id').on('devices.change_seq', '>', p.since),
    )
    .leftJoin('users', 'users.id', 'devices.user_id')
    .select([
      'networks.device_change_seq as head_seq',
      'networks.device_removals as head_removals',
      'networks.route_change_seq as head_routes',
      'devices.id',
      'devices.created_at',
      'devices.user_id',
      'users.login_name as user_login',
      'devices.tags',
      'devices.record_version',
      'devices.last_seen_at',
      'devices.disconnected',
      'devices.change_seq',
    ])
    .where('networks.id', '=', p.networkId),
);

/** Rows of the given devices (in no particular order), with their record versions. */
export async function devicesByIds(
  db: Db,
  networkId: string,
  ids: readonly string[],
): Promise<(DeviceRow & { record_version: number })[]> {
  const rows: (DeviceRow & { record_version: number })[] = [];
  // Chunks keep the IN list far below both dialects' parameter limits.
  for (let start = 0; start < ids.length; start += 500) {
    rows.push(
      ...(await deviceRows(db.selectFrom('devices'))
        .select('devices.record_version')
        .where(notForIndex(db, 'devices.network_id'), '=', networkId)
        .where('devices.id', 'in', ids.slice(start, start + 500))
        .execute()),
    );
  }
  return rows;
}

/**
 * Every route of the network with its primary flag at `now`, in each device's route order
 * (detail records of a whole list): as many rows as the network has routes, not devices. Kept
 * per the caller's stamp of the network's routes and devices (network-routes.ts) and across the
 * clock until a primary flag can change (primaryChangesAt), as a device's routes are.
 */
export async function routesOfNetwork(
  db: Db,
  networkId: string,
  now: number,
  stamp?: ReadStamp,
): Promise<NetworkRouteRow[]> {
  return networkRoutesOf(db, { networkId, cutoff: onlineSince(now) }, stamp);
}

export type NetworkRouteRow = RouteRow & { primary_changes_at: number | null };

/**
 * Built once: every detail list reads it, and a query Kysely builds per call also waits in its
 * connection queue behind any open transaction (storage/sqlite-statements.ts), where a kept
 * list otherwise answers at once.
 */
const networkRoutesOf = compiledQuery(
  (db, p: { networkId: string; cutoff: number }) =>
    routesWithPrimarySince(db, p.networkId, p.cutoff)
      .select(primaryChangesAt(p.cutoff).as('primary_changes_at'))
      .orderBy('routes.created_at')
      .orderBy('routes.prefix'),
  {
    window: { param: 'cutoff', until: firstPrimaryChange },
    // Routes and the devices whose state decides the primaries, as routesOf below.
    stampedBy: 'networkId',
    readsDevices: true,
    readsRecords: true,
    name: 'network-routes',
  },
);

/** The routes of the given devices, in one query per 500 devices. */
export async function routesOfDevices(
  db: Db,
  networkId: string,
  now: number,
  deviceIds: readonly string[],
): Promise<RouteRow[]> {
  const rows: RouteRow[] = [];
  for (let start = 0; start < deviceIds.length; start += 500) {
    rows.push(
      ...(await routesWithPrimarySince(db, networkId, onlineSince(now), true)
        .where('routes.device_id', 'in', deviceIds.slice(start, start + 500))
        .orderBy('routes.created_at')
        .orderBy('routes.prefix')
        .execute()),
    );
  }
  return rows;
}

/** A device's routes, with the online cutoff given (for queries built once). */
export const deviceRoutesQuery = (db: Db, p: { networkId: string; deviceId: string; cutoff: number }) =>
  routesWithPrimarySince(db, p.networkId, p.cutoff, true)
    .where('routes.device_id', '=', p.deviceId)
    .orderBy('routes.created_at')
    .orderBy('routes.prefix');
/**
 * Run on every heartbeat that settles a netmap version and every read of one device, so built
 * once. Its answer depends on the clock (the online cutoff), so each row also says from which
 * cutoff its primary flag may change (primaryChangesAt): an answer is kept, until the next
 * commit, for every later cutoff below the first of those, not only for calls of the same
 * millisecond.
 */
const routesOf = compiledQuery(
  (db, p: { networkId: string; deviceId: string; cutoff: number }) =>
    deviceRoutesQuery(db, p).select(primaryChangesAt(p.cutoff).as('primary_changes_at')),
  {
    window: {
      param: 'cutoff',
      until: firstPrimaryChange,
    },
    // Routes move the read stamp (migration 034); the devices' names, and the presence
    // crossings, approval and expiry that decide the primaries, the device record stamp
    // (migration 044). A router's heartbeat that keeps it online changes nothing shown.
    stampedBy: 'networkId',
    readsDevices: true,
    readsRecords: true,
    name: 'device-routes',
  },
);

export async function routesOfDevice(
  db: Db,
  networkId: string,
  now: number,
  deviceId: string,
  stamp?: ReadStamp,
): Promise<RouteRow[]> {
  return routesOf(db, { networkId, deviceId, cutoff: onlineSince(now) }, stamp);
}

/**
 * Replaces a device's tags: the JSON column for display and the device_tags filter index.
 * Returns false, having changed nothing, when the network has no such device.
 */
export async function replaceTags(
  trx: Db,
  networkId: string,
  deviceId: string,
  tags: readonly string[],
): Promise<boolean> {
  const result = await trx
    .updateTable('devices')
    .set({ tags: listText(tags) })
    .where('network_id', '=', networkId)
    .where('id', '=', deviceId)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) === 0) return false;
  await trx.deleteFrom('device_tags').where('network_id', '=', networkId).where('device_id', '=', deviceId).execute();
  await insertTags(trx, networkId, deviceId, tags);
  return true;
}

export async function insertTags(trx: Db, networkId: string, deviceId: string, tags: readonly string[]): Promise<void> {
  if (tags.length === 0) return;
  await trx
    .insertInto('device_tags')
    .values(tags.map((tag) => ({ network_id: networkId, tag, device_id: deviceId })))
    .execute();
}

/**
 * Whether a node key (`nodekey:` + hex) belongs to an enrolled device of any network: the relay
 * serves every network of the instance and admits only their devices.
 */
export async function isEnrolledNodeKey(db: Db, nodeKey: string): Promise<boolean> {
  const row = await db.selectFrom('devices').select('id').where('node_key', '=', nodeKey).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * Device rules for the management API: list with filters, read, delete, replace tags.
 * An id of another network is 404 like an unknown one, so nothing reveals it exists.
 */
import type { DeviceBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { invalidRequest, notFound } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import type { Db } from '../../storage/database.js';
import { checkTags, requireOwnedTags, requireTagSyntax } from '../acl/tags.js';
import { logNetmapChange } from '../network/netmap-changes.js';
import { addrIndexOf } from './addresses.js';
import { deviceDetail, groupByDevice } from './device-details.js';
import type { DeviceIndex, IndexFilter } from './device-index.js';
import type { DeviceRecords } from './device-records.js';
import { deletionEvents, removeDevices } from './device-removal.js';
import { presentDevice, presentDeviceDetail } from './devices.presenter.js';
import {
  bumpNetmapEpoch,
  type DeviceFilter,
  devicesByIds,
  drivingTag,
  listDeviceStamps,
  listDevices,
  readDevicesPage,
  replaceTags,
  routesOfDevices,
  routesOfFilter,
} from './devices.repository.js';
import type { ListBodies } from './list-bodies.js';

export interface DeviceListInput {
  user?: string;
  tag?: string[];
  online?: 'true' | 'false';
  fields?: 'default' | 'all';
  /** Search: a part of the name, or an address. */
  q?: string;
  /** Paging in name order (either one asks for pages). */
  limit?: number;
  cursor?: string;
}

/** Whether the list is asked for in pages (or searched), not whole. */
export const wantsPage = (input: DeviceListInput): boolean =>
  input.limit !== undefined || input.cursor !== undefined || input.q !== undefined;

const DEFAULT_PAGE = 100;

/** The requested tags, each checked, without repeats. */
function checkedTags(input: DeviceListInput): string[] {
  requireTagSyntax(input.tag ?? []);
  return input.tag ? [...new Set(input.tag)] : [];
}

const onlineOf = (input: DeviceListInput) => (input.online === undefined ? undefined : input.online === 'true');

async function deviceFilter(db: Db, networkId: string, input: DeviceListInput): Promise<DeviceFilter> {
  const tags = checkedTags(input);
  return { user: input.user, tags, online: onlineOf(input), driver: await drivingTag(db, networkId, tags) };
}

/**
 * What a server keeps between list calls: records on every dialect; on SQLite also the index
 * of what lists filter by and the bodies it answered with.
 */
export interface KeptLists {
  records: DeviceRecords;
  index?: { devices: DeviceIndex; bodies: ListBodies };
}

/**
 * The list with `fields=default`, as its response body (UTF-8 JSON): kept records are reused
 * (device-records.ts), so a list reads full rows only of devices that changed since. Which
 * devices it shows comes from the kept index on SQLite (device-index.ts), from a query per call
 * on PostgreSQL.
 */
export async function listDevicesBody(
  ctx: AppContext,
  kept: KeptLists,
  networkId: string,
  input: DeviceListInput,
): Promise<Buffer> {
  const now = ctx.clock.now();
  if (!kept.index) {
    const filter = await deviceFilter(ctx.db, networkId, input);
    const stamps = await listDeviceStamps(ctx.db, networkId, now, filter);
    return kept.records.listBody(stamps, now, rowsReader(ctx, networkId));
  }
  const filter = indexFilter(input);
  const devices = await kept.index.devices.view(ctx.db, networkId);
  if (!devices) return kept.records.listBody([], now, rowsReader(ctx, networkId));
  const cached = kept.index.bodies.get(networkId, filter, devices, now);
  if (cached) return cached;
  const generation = devices.generation;
  const selection = devices.select(filter, now);
  const body = await kept.records.listBody(selection.devices, now, rowsReader(ctx, networkId));
  kept.index.bodies.keep(
    networkId,
    filter,
    { devices, generation, madeAt: now, validUntil: selection.validUntil },
    body,
  );
  return body;
}

/**
 * Reads the rows of devices whose records are not kept. Made only when a body is built: the
 * kept body of an unchanged list is most calls, and a closure made per call costs more there
 * than the rest of the lookup (the loader names each one it makes).
 */
function rowsReader(ctx: AppContext, networkId: string) {
  return (ids: string[]) => devicesByIds(ctx.db, networkId, ids);
}

function indexFilter(input: DeviceListInput): IndexFilter {
  return { user: input.user, tags: checkedTags(input), online: onlineOf(input) };
}

/**
 * A page of the list in name order, with the number of devices the filter selects: what a
 * console shows of 10,000 devices without reading them all. The cursor is the page's last
 * name, made opaque; fields=all adds the routes of the page's devices in one more query.
 */
export async function listDevicesPage(ctx: AppContext, networkId: string, input: DeviceListInput) {
  const filter = await deviceFilter(ctx.db, networkId, input);
  if (input.q !== undefined) filter.search = searchOf(input.q);
  const now = ctx.clock.now();
  const limit = input.limit ?? DEFAULT_PAGE;
  const afterName = input.cursor === undefined ? undefined : decodeCursor(input.cursor);
  const { rows, total } = await readDevicesPage(ctx.db, networkId, now, filter, { afterName, limit: limit + 1 });
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  let devices: DeviceBody[];
  if (input.fields === 'all') {
    const byDevice = groupByDevice(
      await routesOfDevices(
        ctx.db,
        networkId,
        now,
        page.map((r) => r.id),
      ),
    );
    devices = page.map((row) => presentDeviceDetail(row, now, byDevice.get(row.id) ?? []));
  } else {
    devices = page.map((row) => presentDevice(row, now));
  }
  const last = page[page.length - 1];
  return { devices, nextCursor: hasMore && last ? encodeCursor(last.name) : null, hasMore, total };
}

function searchOf(q: string): NonNullable<DeviceFilter['search']> {
  const text = q.trim().toLowerCase();
  if (text.length === 0 || text.length > 64)
    throw invalidRequest('q is a part of a device name or an address (1–64 characters)');
  // Names are DNS labels: other text (an address, a typo) matches no name.
  return { nameContains: /^[a-z0-9-]+$/.test(text) ? text : undefined, addrIndex: addrIndexOf(text) };
}

const encodeCursor = (name: string) => Buffer.from(name, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  const name = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(name) || encodeCursor(name) !== cursor) {
    throw invalidRequest('cursor is not a cursor returned by this API for the device list');
  }
  return name;
}

/** The list with `fields=all`: detail records with their routes, read in two queries. */
export async function listDeviceDetails(ctx: AppContext, networkId: string, input: DeviceListInput) {
  const filter = await deviceFilter(ctx.db, networkId, input);
  const now = ctx.clock.now();
  const [rows, routes] = await Promise.all([
    listDevices(ctx.db, networkId, now, filter),
    routesOfFilter(ctx.db, networkId, now, filter),
  ]);
  const byDevice = groupByDevice(routes);
  return rows.map((row) => presentDeviceDetail(row, now, byDevice.get(row.id) ?? []));
}

export async function deleteDevice(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const { networkId } = actor;
  await unitOfWork(ctx, actor, 'device.delete', async (trx, now) => {
    const events = await deletionEvents(trx, networkId, [id], now);
    // removeDevices bumps the netmap epoch; nothing deleted (another network's id) rolls it back.
    if ((await removeDevices(trx, networkId, [id])) === 0) throw notFound(`device ${id} does not exist`);
    return { value: undefined, target: id, events };
  });
}

export async function setDeviceTags(
  ctx: AppContext,
  actor: Actor,
  id: string,
  tags: readonly string[],
): Promise<DeviceBody> {
  const { networkId } = actor;
  const wanted = checkTags(tags);
  // Every tag must be defined in the policy's tagOwners (an API key may apply any defined tag).
  await requireOwnedTags(ctx.db, networkId, wanted);
  return unitOfWork(ctx, actor, 'device.tags', async (trx, now) => {
    // Tags are identity in the policy, so every netmap may change.
    await bumpNetmapEpoch(trx, networkId);
    await logNetmapChange(trx, networkId, [id]);
    if (!(await replaceTags(trx, networkId, id, wanted))) throw notFound(`device ${id} does not exist`);
    const device = await deviceDetail(trx, networkId, id, now);
    return { value: device, target: id, events: [{ type: 'device.updated', data: { device } }] };
  });
}

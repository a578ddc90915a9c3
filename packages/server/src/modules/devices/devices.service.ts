/**
 * Device rules for the management API: list with filters, read, delete, replace tags.
 * An id of another network is 404 like an unknown one, so nothing reveals it exists.
 */
import type { DeviceBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { invalidRequest, notFound } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import type { ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { checkTags, requireOwnedTags, requireTagSyntax } from '../acl/tags.js';
import { netmapEpoch } from '../network/epochs.js';
import { onlineUntil } from '../network/online.js';
import { addrIndexOf } from './addresses.js';
import { deviceDetail, groupByDevice } from './device-details.js';
import { type DeviceIndex, type IndexFilter, type Selection, selectByPresence } from './device-index.js';
import type { RecordShape } from './device-records.js';
import { deletionEvents, removeDevices } from './device-removal.js';
import { presentDevice, presentDeviceDetail } from './devices.presenter.js';
import {
  type DeviceFilter,
  devicesByIds,
  drivingTag,
  listDeviceStamps,
  oldestOnlineSeen,
  readDevicesPage,
  replaceTags,
  routesOfDevices,
} from './devices.repository.js';
import { keptLists } from './kept-lists.js';
import { assemble, type ListAssembly } from './list-assembly.js';
import type { BodyMade, Built } from './list-bodies.js';
import { deviceListStamp, deviceListStamps } from './list-stamp.js';
import { networkRoutes } from './network-routes.js';

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

/**
 * The `user` filter, a user id or login name, in lower case: login names are stored so (as
 * `POST /v1/users` takes `Ana@Example.com` for `ana@example.com`), and ids are lower case.
 */
const userOf = (input: DeviceListInput) => input.user?.toLowerCase();

async function deviceFilter(db: Db, networkId: string, input: DeviceListInput): Promise<DeviceFilter> {
  const tags = checkedTags(input);
  return { user: userOf(input), tags, online: onlineOf(input), driver: await drivingTag(db, networkId, tags) };
}

/**
 * How a whole list is answered: a shape of the kept records (device-records.ts) named for the
 * kept bodies, `name` covering whatever the shape itself filters or shows, since bodies are
 * kept by it (`/v1/devices`, its `fields=all`, `/api/v2`'s list and its fields and filters).
 */
export interface ListShape extends RecordShape {
  name: string;
}

/**
 * A whole list as its response body (UTF-8 JSON), `{"devices":[…]}` in creation order: the
 * devices the filter selects, as `shape` shows them. The body is kept while nothing it shows
 * has moved, and every caller shares one build of it (list-bodies.ts); what tells is the kept
 * index on SQLite (device-index.ts), the network's list stamp on PostgreSQL (list-stamp.ts).
 * A build reuses kept records (device-records.ts), so it reads full rows only of devices that
 * changed since; detail records show the network's routes, kept per the stamp that same read
 * gives them (network-routes.ts).
 */
export async function listDevicesBody(
  ctx: AppContext,
  networkId: string,
  input: DeviceListInput,
  shape: ListShape,
  stamp?: ReadStamp,
): Promise<Buffer> {
  const kept = keptLists(ctx);
  const now = ctx.clock.now();
  const filter = indexFilter(input);
  const read = await (kept.index
    ? fromIndex(ctx.db, kept.index, networkId)
    : fromStamp(ctx.db, networkId, input, stamp));
  // Only the index knows a network is gone; its list is empty.
  if (!read) return NO_DEVICES;
  const routes = shape.details ? await networkRoutes(ctx.db, networkId, now, read.routesStamp) : undefined;
  const build = async (previous: ListAssembly | undefined): Promise<Built> => {
    const rows = rowsReader(ctx, networkId);
    const selection = await read.select(filter, now);
    // Bodies are kept by shape name, which fixes the serializer and what the records show; the
    // routes are what else they show (a body made with other routes lends the next one nothing).
    const assembly = await assemble(selection.devices, now, previous, routes?.text ?? '', (stamps) =>
      kept.records.render(stamps, now, rows, routes?.byDevice, shape),
    );
    return { body: assembly.body, validUntil: selection.validUntil, assembly };
  };
  // The routes as read are part of what a detail body shows (primaries follow other routers' presence).
  const made: BodyMade = {
    filter,
    source: read.source,
    version: read.version,
    madeAt: now,
    validUntil: Number.POSITIVE_INFINITY,
    routes: routes?.text ?? '',
  };
  return kept.bodies.body(shape.name, networkId, made, now, build, read.stillCurrent);
}

const NO_DEVICES = Buffer.from('{"devices":[]}');

/** What a list was read from, at which version, and the selection of its filter there. */
interface ListRead {
  source: object | undefined;
  version: number | string;
  /** What the network's routes are kept by, read with `version` (network-routes.ts). */
  routesStamp: ReadStamp | undefined;
  select(filter: IndexFilter, now: number): Selection | Promise<Selection>;
  /** Whether nothing the list shows has moved since `version` was read. */
  stillCurrent(): boolean | Promise<boolean>;
}

/** SQLite: the kept index, brought up to date; undefined when the network is gone. */
async function fromIndex(db: Db, index: DeviceIndex, networkId: string): Promise<ListRead | undefined> {
  const devices = await index.view(db, networkId);
  if (!devices) return undefined;
  const version = devices.generation;
  return {
    source: devices,
    version,
    // Routes move the route counter; the devices their primaries follow, the cursor.
    routesStamp: { networkId, seq: devices.routesSeq, devices: devices.seq + devices.removals },
    select: (filter, now) => devices.select(filter, now),
    stillCurrent: () => devices.generation === version,
  };
}

/**
 * PostgreSQL: the network's list stamp; a selection is a query. A body holds until the first
 * device it looks at times out: one it shows (selectByPresence), or for an `online=false` list
 * the first online device it would gain, found by an aggregate rather than by reading them all.
 *
 * A call made with an API key brings both stamps, read by its key's statement after it arrived
 * (http/authenticate.ts): the list then takes them from there instead of reading them again, so
 * an unchanged list costs no statement of its own. Other callers read them here.
 */
async function fromStamp(db: Db, networkId: string, input: DeviceListInput, stamp?: ReadStamp): Promise<ListRead> {
  const { list: version, routes: routesStamp } =
    stamp?.networkId === networkId && stamp.devices !== undefined
      ? { list: String(stamp.devices), routes: stamp }
      : await deviceListStamps(db, networkId);
  return {
    source: undefined,
    version,
    routesStamp,
    select: async (_filter, now) => {
      const filter = await deviceFilter(db, networkId, input);
      const [stamps, gained] = await Promise.all([
        listDeviceStamps(db, networkId, now, filter),
        filter.online === false ? oldestOnlineSeen(db, networkId, now, filter) : null,
      ]);
      const selection = selectByPresence(stamps, filter.online, now);
      if (gained !== null) selection.validUntil = Math.min(selection.validUntil, onlineUntil(gained));
      return selection;
    },
    stillCurrent: async () => (await deviceListStamp(db, networkId)) === version,
  };
}

/**
 * Reads the rows of devices whose records are not kept. Made only when a body is built: the
 * kept body of an unchanged list is most calls, and a closure made per call costs more there
 * than the rest of the lookup (the loader names each function a call makes).
 */
function rowsReader(ctx: AppContext, networkId: string) {
  return (ids: string[]) => devicesByIds(ctx.db, networkId, ids);
}

function indexFilter(input: DeviceListInput): IndexFilter {
  return { user: userOf(input), tags: checkedTags(input), online: onlineOf(input) };
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

export async function deleteDevice(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const { networkId } = actor;
  await unitOfWork(ctx, actor, 'device.delete', async (trx, now, changes) => {
    const events = await deletionEvents(trx, networkId, [id], now);
    // removeDevices moves the netmap epoch; nothing deleted (another network's id) rolls it back.
    if ((await removeDevices(trx, changes, networkId, [id])) === 0) throw notFound(`device ${id} does not exist`);
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
  return unitOfWork(ctx, actor, 'device.tags', async (trx, now, changes) => {
    const before = await deviceDetail(trx, networkId, id, now);
    // The set the device has already is no transition: no netmap moves, no device.updated.
    if (sameSet(before.tags, wanted)) return { value: before, target: id };
    // Tags are identity in the policy, so every netmap may change.
    await changes.touch(netmapEpoch, [id]);
    if (!(await replaceTags(trx, networkId, id, wanted))) throw notFound(`device ${id} does not exist`);
    const device = await deviceDetail(trx, networkId, id, now);
    return { value: device, target: id, events: [{ type: 'device.updated', data: { device } }] };
  });
}

/** `wanted` is sorted and without duplicates (checkTags). */
function sameSet(had: readonly string[], wanted: readonly string[]): boolean {
  const set = new Set(had);
  return set.size === wanted.length && wanted.every((tag) => set.has(tag));
}

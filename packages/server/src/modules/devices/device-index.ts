/**
 * The device list from memory, on SQLite. Reading the ids, record versions and presence of
 * 1,000 devices through the tag index cost about 2.3 ms per list on SQLite, most of it turning
 * rows into objects; here each server keeps, per network, what a list filters and orders by
 * (creation order, tags, owner, presence, record version), and a call reads only the devices
 * changed since the previous call: one indexed statement, which returns the network's row alone
 * when nothing changed.
 *
 * Exact, not merely recent: migration 012's triggers give every change a list can see the
 * network's next number, in the writer's transaction, whoever the writer is, and SQLite commits
 * one writer at a time, so numbers become visible in order and `change_seq > cursor` misses
 * nothing. Deletions, which a cursor cannot see, are counted; a count that moved drops the
 * network's index, and the call reads it whole again. Each call reads the cursor itself, after
 * the previous call's read, so it sees every change committed before it began.
 *
 * PostgreSQL commits concurrently and keeps no such order (see migration 012); there a list
 * reads its devices per build, and its kept body is checked against the network's list stamp
 * (list-stamp.ts).
 */
import { parseList } from '../../lib/json.js';
import type { Db } from '../../storage/database.js';
import { committedVersion } from '../../storage/sqlite-statements.js';
import { isOnline, onlineUntil } from '../network/online.js';
import { type DeviceStamp, deviceChangesSince } from './devices.repository.js';

/** What a list filters and orders by, for one device; also the stamp its record is kept by. */
export interface IndexedDevice extends DeviceStamp {
  created_at: number;
  user_id: string | null;
  user_login: string | null;
  tags: readonly string[];
  change_seq: number;
}

export interface IndexFilter {
  /** User id or login name. */
  user?: string;
  /** Every one must be on the device. */
  tags: readonly string[];
  online?: boolean;
}

/** The devices a list shows, and until when that holds with nothing written. */
export interface Selection<D extends DeviceStamp = DeviceStamp> {
  devices: D[];
  validUntil: number;
}

/**
 * The devices of `looked` (those the list's other filters select) that the presence filter
 * keeps, and the first moment one of them times out: the answer changes then, whether the
 * device is shown (its `online`) or not (an `online=false` list gains it).
 */
export function selectByPresence<D extends DeviceStamp>(
  looked: readonly D[],
  online: boolean | undefined,
  now: number,
): Selection<D> {
  const devices: D[] = [];
  let validUntil = Number.POSITIVE_INFINITY;
  for (const device of looked) {
    const isUp = isOnline(device, now);
    if (isUp) validUntil = Math.min(validUntil, onlineUntil(device.last_seen_at as number));
    if (online === undefined || isUp === online) devices.push(device);
  }
  return { devices, validUntil };
}

type ChangeRow = Awaited<ReturnType<typeof deviceChangesSince>>[number];

const NONE: readonly IndexedDevice[] = [];

const byCreation = (a: IndexedDevice, b: IndexedDevice) =>
  a.created_at - b.created_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** One network's devices, in creation order, with a list per tag made when first needed. */
export class NetworkDevices {
  /** The cursor: the network's device_change_seq this index has read up to. */
  seq = -1;
  removals = -1;
  /** The network's route counter at this index's last read (migration 038). */
  routesSeq = -1;
  /** Moves whenever a read changed anything: a list made at one generation is that list at it. */
  generation = 0;
  /** The database's commit counter read just before this index's last read (committedVersion). */
  readAt: number | undefined;
  private readonly byId = new Map<string, IndexedDevice>();
  private ordered: IndexedDevice[] = [];
  private orderStale = false;
  private byTag: Map<string, IndexedDevice[]> | null = null;

  /** Applies a read of deviceChangesSince; a row older than what is kept changes nothing. */
  apply(rows: readonly ChangeRow[]): void {
    for (const row of rows) {
      this.seq = Math.max(this.seq, Number(row.head_seq));
      this.removals = Number(row.head_removals);
      this.routesSeq = Number(row.head_routes);
      if (row.id === null) continue;
      const seq = Number(row.change_seq);
      const kept = this.byId.get(row.id);
      if (kept && kept.change_seq >= seq) continue;
      const device: IndexedDevice = {
        id: row.id,
        created_at: Number(row.created_at),
        user_id: row.user_id,
        user_login: row.user_login,
        tags: parseList(row.tags),
        record_version: Number(row.record_version),
        last_seen_at: row.last_seen_at == null ? null : Number(row.last_seen_at),
        disconnected: Number(row.disconnected),
        change_seq: seq,
      };
      if (kept) this.update(kept, device);
      else this.add(device);
      this.generation++;
    }
  }

  /**
   * The devices the filter selects, in creation order, and until when that answer holds with
   * nothing else changing: the first moment a device the filter looks at times out.
   */
  select(filter: IndexFilter, now: number): Selection<IndexedDevice> {
    if (this.orderStale) {
      this.ordered.sort(byCreation);
      this.orderStale = false;
      this.byTag = null;
    }
    let from: readonly IndexedDevice[] = this.ordered;
    // The rarest requested tag drives; every other one is checked on the device.
    for (const tag of filter.tags) {
      const tagged = this.tagLists().get(tag) ?? NONE;
      if (tagged.length < from.length || from === this.ordered) from = tagged;
    }
    const { user, tags } = filter;
    const looked =
      user === undefined && tags.length < 2
        ? from
        : from.filter(
            (device) =>
              (user === undefined || device.user_id === user || device.user_login === user) &&
              (tags.length < 2 || tags.every((tag) => device.tags.includes(tag))),
          );
    return selectByPresence(looked, filter.online, now);
  }

  private add(device: IndexedDevice): void {
    this.byId.set(device.id, device);
    const last = this.ordered[this.ordered.length - 1];
    this.ordered.push(device);
    if (last && byCreation(last, device) > 0) this.orderStale = true;
    else if (this.byTag) {
      // Appended in order (an enrollment): the tag lists stay sorted by appending too.
      for (const tag of device.tags) {
        const tagged = this.byTag.get(tag);
        if (tagged) tagged.push(device);
        else this.byTag.set(tag, [device]);
      }
    }
  }

  /** In place: the ordered list and the tag lists hold the same object. */
  private update(kept: IndexedDevice, device: IndexedDevice): void {
    if (kept.created_at !== device.created_at) this.orderStale = true;
    if (kept.tags.length !== device.tags.length || kept.tags.some((tag, i) => tag !== device.tags[i])) {
      this.byTag = null;
    }
    Object.assign(kept, device);
  }

  private tagLists(): Map<string, IndexedDevice[]> {
    if (!this.byTag) {
      this.byTag = new Map();
      for (const device of this.ordered) {
        for (const tag of device.tags) {
          const tagged = this.byTag.get(tag);
          if (tagged) tagged.push(device);
          else this.byTag.set(tag, [device]);
        }
      }
    }
    return this.byTag;
  }
}

/** Networks whose index is kept; the least recently listed is dropped past this. */
const MAX_NETWORKS = 256;

export class DeviceIndex {
  private readonly networks = new Map<string, Promise<NetworkDevices | undefined>>();

  constructor(private readonly maxNetworks = MAX_NETWORKS) {}

  /**
   * The network's index, brought up to date with every change committed before the call
   * (undefined for an unknown network). Each call's read follows the previous call's for the
   * network, so reads apply in order.
   */
  view(db: Db, networkId: string): Promise<NetworkDevices | undefined> {
    const previous = this.networks.get(networkId);
    // Read before the chained read below runs: nothing committed since the index's last read
    // began means nothing it would read has changed (storage/sqlite-statements.ts).
    const version = committedVersion(db);
    const next = (previous ?? Promise.resolve(undefined))
      .catch(() => undefined)
      .then((known) =>
        known && version !== undefined && known.readAt === version ? known : this.read(db, networkId, known, version),
      );
    this.networks.delete(networkId);
    this.networks.set(networkId, next);
    if (this.networks.size > this.maxNetworks) this.networks.delete(this.networks.keys().next().value as string);
    return next;
  }

  private async read(db: Db, networkId: string, known: NetworkDevices | undefined, version: number | undefined) {
    let devices = known ?? new NetworkDevices();
    let rows = await deviceChangesSince(db, { networkId, since: devices.seq });
    if (rows.length === 0) return undefined;
    if (known && Number(rows[0]!.head_removals) !== known.removals) {
      devices = new NetworkDevices();
      rows = await deviceChangesSince(db, { networkId, since: devices.seq });
      if (rows.length === 0) return undefined;
    }
    devices.apply(rows);
    devices.readAt = version;
    return devices;
  }
}

/**
 * The device list's records, kept by each server process between calls: the list records
 * (`GET /v1/devices`) and the detail records (`?fields=all`, `/api/v2`'s device list). Listing
 * 1,000 devices used to read and convert every text column of every row and serialise every
 * record again; now a list reads only each device's id, record version and presence
 * (listDeviceStamps, or the kept index on SQLite), reads full rows only for devices it has not
 * kept at that version, and re-serialises a kept record only when its presence moved. A
 * heartbeat moves presence, not the version; anything else a record shows of the device's row
 * moves the version (triggers of migrations 011, 018 and 021), whichever instance made the
 * change, so a kept record is never served stale.
 *
 * A detail record also shows the device's routes, whose `primary` follows other routers'
 * presence and approval. The caller brings the network's routes as they stand at the call
 * (network-routes.ts: kept per stamp and clock window, read again when either moves), and a
 * detail record is kept by its version and the text of its routes as that call got them: a
 * route approved, withdrawn, or handed over to another router, by a write or by a router timing
 * out, rebuilds the records of just the devices whose routes show it.
 *
 * Presence always comes from the stamp of this very call, so `online` agrees with the list's
 * own `online` filter. The number of kept records is bounded; the oldest are dropped first.
 */
import type { DeviceBody } from '@warren/contract';
import { innerMap } from '../../lib/nested-maps.js';
import { isoOrNull } from '../../lib/time.js';
import { isOnline } from '../network/online.js';
import type { RouteRow } from '../routes/routes.repository.js';
import { presentDevice, presentDeviceDetail } from './devices.presenter.js';
import type { DeviceRow, DeviceStamp } from './devices.repository.js';

/** A record → its JSON, by the Device response schema of the routes. */
export type SerializeDevice = (record: DeviceBody) => string;

/** Reads the rows of the devices whose records are not kept; one deleted in between is absent. */
export type RowsReader = (ids: string[]) => Promise<(DeviceRow & { record_version: number })[]>;

/** The routes of a network's devices, by device, as one call read them (for detail records). */
export type RoutesByDevice = ReadonlyMap<string, readonly RouteRow[]>;

interface Kept {
  version: number;
  /** What the record shows of the device's routes (detail records; '' for list records). */
  routes: string;
  online: boolean;
  seen: number | null;
  /** Replaced, never changed, when anything it shows moves: the object stands for its content. */
  record: DeviceBody;
}

/**
 * How kept records are shown in a list body: detail or list records, which of them it shows
 * (filters checked on the records, for `/api/v2`), and one record's JSON. A record's JSON is
 * kept per serializer, by the record object, and made when a body first needs it.
 */
export interface RecordShape {
  details: boolean;
  shows?: (record: DeviceBody) => boolean;
  serialize: SerializeDevice;
}

const NO_ROUTES: readonly RouteRow[] = [];

/** Everything a detail record shows of a device's routes, as text: equal text, equal record. */
export function routesText(routes: readonly RouteRow[]): string {
  let text = '';
  for (const r of routes) text += `${r.id} ${r.prefix} ${r.state} ${r.advertised} ${Number(r.is_primary)};`;
  return text;
}

/** One kind of record (list or detail), kept by device id. */
class KeptRecords {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly capacity: number,
    private readonly present: (row: DeviceRow, now: number, routes: readonly RouteRow[]) => DeviceBody,
  ) {}

  get size(): number {
    return this.kept.size;
  }

  /**
   * The kept records of `stamps`, in their order, current at the stamps and `routes`;
   * undefined for a device whose row is gone.
   */
  async current(
    stamps: readonly DeviceStamp[],
    now: number,
    readRows: RowsReader,
    routes: RoutesByDevice | undefined,
  ): Promise<(Kept | undefined)[]> {
    const routesOf = (id: string) => routes?.get(id) ?? NO_ROUTES;
    const stale = stamps.filter((stamp) => {
      const kept = this.kept.get(stamp.id);
      return kept?.version !== Number(stamp.record_version) || kept.routes !== routesText(routesOf(stamp.id));
    });
    if (stale.length > 0) {
      for (const row of await readRows(stale.map((stamp) => stamp.id))) {
        const deviceRoutes = routesOf(row.id);
        this.keep(row, this.present(row, now, deviceRoutes), routesText(deviceRoutes));
      }
    }
    const current: (Kept | undefined)[] = [];
    for (const stamp of stamps) {
      const kept = this.kept.get(stamp.id);
      if (kept) withPresence(kept, stamp, now);
      current.push(kept);
    }
    return current;
  }

  private keep(row: DeviceRow & { record_version: number }, record: DeviceBody, routes: string): void {
    this.kept.delete(row.id);
    this.kept.set(row.id, {
      version: Number(row.record_version),
      routes,
      online: record.online,
      seen: row.last_seen_at == null ? null : Number(row.last_seen_at),
      record,
    });
    if (this.kept.size > this.capacity) {
      // Map iteration is insertion order: the first keys are the records kept longest ago.
      for (const id of this.kept.keys()) {
        this.kept.delete(id);
        if (this.kept.size <= this.capacity * 0.9) break;
      }
    }
  }
}

function withPresence(kept: Kept, stamp: DeviceStamp, now: number): void {
  const online = isOnline(stamp, now);
  const seen = stamp.last_seen_at == null ? null : Number(stamp.last_seen_at);
  if (kept.online !== online || kept.seen !== seen) {
    kept.record = { ...kept.record, online, lastSeen: isoOrNull(seen) };
    kept.online = online;
    kept.seen = seen;
  }
}

/** The JSON of each record, by serializer and record object (see RecordShape). */
class RecordJson {
  private readonly bySerializer = new WeakMap<SerializeDevice, WeakMap<DeviceBody, Buffer>>();

  /** Each record's JSON, null where the shape does not show it, undefined where it is gone. */
  of(records: readonly (Kept | undefined)[], shape: RecordShape): (Buffer | null | undefined)[] {
    const json = innerMap(this.bySerializer, shape.serialize, WeakMap);
    const out: (Buffer | null | undefined)[] = [];
    for (const kept of records) {
      if (!kept) {
        out.push(undefined);
        continue;
      }
      const { record } = kept;
      if (shape.shows && !shape.shows(record)) {
        out.push(null);
        continue;
      }
      let one = json.get(record);
      if (!one) {
        one = Buffer.from(shape.serialize(record));
        json.set(record, one);
      }
      out.push(one);
    }
    return out;
  }
}

export class DeviceRecords {
  private readonly list: KeptRecords;
  private readonly details: KeptRecords;
  private readonly json = new RecordJson();

  constructor(capacity = 100_000) {
    this.list = new KeptRecords(capacity, (row, now) => presentDevice(row, now));
    this.details = new KeptRecords(capacity, presentDeviceDetail);
  }

  /**
   * The JSON of the records of `stamps`, in their order, as `shape` shows them (list-assembly.ts
   * joins them into a body); detail records with the routes given.
   */
  async render(
    stamps: readonly DeviceStamp[],
    now: number,
    readRows: RowsReader,
    routes: RoutesByDevice | undefined,
    shape: RecordShape,
  ): Promise<(Buffer | null | undefined)[]> {
    const records = shape.details
      ? await this.details.current(stamps, now, readRows, routes)
      : await this.list.current(stamps, now, readRows, undefined);
    return this.json.of(records, shape);
  }

  /** How many records are kept, of each kind (for tests and the benchmark). */
  get size(): { list: number; details: number } {
    return { list: this.list.size, details: this.details.size };
  }
}

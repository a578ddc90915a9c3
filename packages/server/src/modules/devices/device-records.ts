/**
 * The device list's records, kept by each server process between calls. Listing 1,000 devices
 * used to read and convert every text column of every row and serialise every record again;
 * now a list reads only each device's id, record version and presence (listDeviceStamps),
 * reads full rows only for devices it has not kept at that version, and re-serialises a kept
 * record only when its presence moved. A heartbeat moves presence, not the version; a rename,
 * a re-tag or a new owner moves the version (triggers of migration 011), whichever instance
 * made the change, so a kept record is never served stale.
 *
 * Presence always comes from the stamp of this very call, so `online` agrees with the list's
 * own `online` filter. The number of kept records is bounded; the oldest are dropped first.
 */
import type { DeviceBody } from '@warren/contract';
import { isoOrNull } from '../../lib/time.js';
import { isOnline } from '../network/online.js';
import { presentDevice } from './devices.presenter.js';
import type { DeviceRow, DeviceStamp } from './devices.repository.js';

/** A list record → its JSON, by the response schema of the route. */
export type SerializeDevice = (record: DeviceBody) => string;

interface Kept {
  version: number;
  online: boolean;
  seen: number | null;
  /** The record's JSON, UTF-8 encoded once: a list is then one copy of these bytes. */
  json: Buffer;
  record: DeviceBody;
}

/** The list's response body is `{"devices":[…]}`, written around the kept bytes in one copy. */
const OPEN = Buffer.from('{"devices":[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');

export class DeviceRecords {
  private readonly kept = new Map<string, Kept>();

  constructor(
    private readonly serialize: SerializeDevice,
    private readonly capacity = 100_000,
  ) {}

  /**
   * The list's response body, `{"devices":[…]}` with the records of `stamps` in their order,
   * as UTF-8 bytes. `readRows` reads the rows
   * of the devices not kept at their stamp's version; one deleted in between is left out.
   */
  async listBody(
    stamps: readonly DeviceStamp[],
    now: number,
    readRows: (ids: string[]) => Promise<(DeviceRow & { record_version: number })[]>,
  ): Promise<Buffer> {
    const stale = stamps.filter((stamp) => this.kept.get(stamp.id)?.version !== Number(stamp.record_version));
    if (stale.length > 0) {
      for (const row of await readRows(stale.map((stamp) => stamp.id))) this.keep(row, now);
    }
    const parts: Buffer[] = [OPEN];
    for (const stamp of stamps) {
      const kept = this.kept.get(stamp.id);
      if (!kept) continue;
      if (parts.length > 1) parts.push(COMMA);
      parts.push(this.withPresence(kept, stamp, now));
    }
    parts.push(CLOSE);
    return Buffer.concat(parts);
  }

  /** How many records are kept (for tests and the benchmark). */
  get size(): number {
    return this.kept.size;
  }

  private keep(row: DeviceRow & { record_version: number }, now: number): void {
    const record = presentDevice(row, now);
    this.kept.delete(row.id);
    this.kept.set(row.id, {
      version: Number(row.record_version),
      online: record.online,
      seen: row.last_seen_at == null ? null : Number(row.last_seen_at),
      record,
      json: Buffer.from(this.serialize(record)),
    });
    if (this.kept.size > this.capacity) {
      // Map iteration is insertion order: the first keys are the records kept longest ago.
      for (const id of this.kept.keys()) {
        this.kept.delete(id);
        if (this.kept.size <= this.capacity * 0.9) break;
      }
    }
  }

  private withPresence(kept: Kept, stamp: DeviceStamp, now: number): Buffer {
    const online = isOnline(stamp, now);
    const seen = stamp.last_seen_at == null ? null : Number(stamp.last_seen_at);
    if (kept.online !== online || kept.seen !== seen) {
      kept.record = { ...kept.record, online, lastSeen: isoOrNull(seen) };
      kept.online = online;
      kept.seen = seen;
      kept.json = Buffer.from(this.serialize(kept.record));
    }
    return kept.json;
  }
}

/**
 * The connection log: devices report batches of connections; API keys page through them.
 *
 * A batch is checked entirely (its shape, then that every source is the reporter's: see
 * connections.source.ts) before anything is written and stored in one transaction, so it is
 * all or nothing. Entries are appended under the network's `conn:` lock, taken right
 * before the insert: sequence order is then commit order, and a reader holding a cursor can
 * never see a later entry before an earlier one commits.
 */
import type { ConnectionLogRequest, ReportedConnectionRequest } from '@warren/contract';
import type { AppContext, DeviceRef } from '../../core/context.js';
import { invalidRequest } from '../../core/errors.js';
import { batchedWrites } from '../../lib/write-batches.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import type { Db } from '../../storage/database.js';
import { presentConnection } from './connections.presenter.js';
import {
  type ConnectionRow,
  connectionsAfter,
  deviceIdByName,
  deviceNames,
  devicesByAddrIndex,
  insertConnections,
  lastLoggedAt,
  type NewConnectionRow,
} from './connections.repository.js';
import { checkSources } from './connections.source.js';
import { type ParsedConnection, parseConnection } from './connections.validate.js';
import { readPage } from './paging.js';

const DEVICE_ID = /^dev_[0-9a-z]{1,40}$/;
/** Device names are DNS labels (modules/devices/addresses.ts). */
const DEVICE_NAME = /^[a-z0-9][a-z0-9-]{0,62}$/i;

/** Checks every entry; the first bad one refuses the batch, naming its index. */
export function parseBatch(entries: readonly ReportedConnectionRequest[], reporter: string): ParsedConnection[] {
  const parsed: ParsedConnection[] = [];
  for (let index = 0; index < entries.length; index++) {
    const result = parseConnection(entries[index] as ReportedConnectionRequest, reporter);
    if (typeof result === 'string') {
      throw invalidRequest(`entries[${index}]: ${result}; nothing of this batch was stored`, { index });
    }
    parsed.push(result);
  }
  return parsed;
}

/** Rows of a checked batch, with each destination resolved to a device of the network. */
export async function toRows(
  db: Db,
  reporter: DeviceRef,
  parsed: readonly ParsedConnection[],
): Promise<NewConnectionRow[]> {
  const indexes = new Set<number>();
  for (const entry of parsed) if (entry.dst.addrIndex !== undefined) indexes.add(entry.dst.addrIndex);
  const devices = await devicesByAddrIndex(db, reporter.networkId, [...indexes]);
  return parsed.map((entry) => ({
    network_id: reporter.networkId,
    logged_at: 0, // set when appended
    start_at: entry.startMs,
    end_at: entry.endMs,
    proto: entry.proto,
    src_device_id: reporter.deviceId,
    src_addr: entry.src.text,
    dst_device_id: entry.dst.addrIndex === undefined ? null : (devices.get(entry.dst.addrIndex) ?? null),
    dst_addr: entry.dst.text,
    tx_bytes: entry.txBytes,
    rx_bytes: entry.rxBytes,
    tx_packets: entry.txPackets,
    rx_packets: entry.rxPackets,
    reported_by: reporter.deviceId,
  }));
}

/**
 * Appends rows of one network in one transaction. `logged` is the time Warren recorded the
 * batch, kept from going backwards in log order (clock steps, or instances whose clocks
 * differ), so that `since` can be turned into a position in the log.
 *
 * Appends of a network hold its `conn:` lock from the insert to the commit, so they commit one
 * after another; reports arriving while one is written go together in the next transaction
 * (lib/write-batches.ts), each report's rows together and in the order the reports came. A
 * fleet reporting at once otherwise queued on the lock, each report holding a pooled
 * connection while it waited, until heartbeats waited for one too.
 */
export function appendConnections(db: Db, networkId: string, rows: NewConnectionRow[], now: number): Promise<void> {
  if (rows.length === 0) return Promise.resolve();
  return queueAppend(db, networkId, { rows, now });
}

/** Reports per transaction: each holds at most 1,000 entries. */
const MAX_REPORTS = 64;

const queueAppend = batchedWrites(
  async (db: Db, networkId: string, reports: readonly { rows: NewConnectionRow[]; now: number }[]) => {
    await db.transaction().execute(async (trx) => {
      await advisoryLock(trx, `conn:${networkId}`);
      let logged = (await lastLoggedAt(trx, networkId)) ?? 0;
      for (const { rows, now } of reports) {
        logged = Math.max(logged, now);
        for (const row of rows) row.logged_at = logged;
      }
      await insertConnections(
        trx,
        reports.flatMap((report) => report.rows),
      );
    });
    return reports.map(() => undefined);
  },
  MAX_REPORTS,
);

/** POST /v1/node/connections: check, resolve, store; returns how many entries were stored. */
export async function reportConnections(
  ctx: AppContext,
  reporter: DeviceRef,
  entries: readonly ReportedConnectionRequest[],
): Promise<number> {
  const parsed = parseBatch(entries, reporter.deviceId);
  if (parsed.length === 0) return 0;
  await checkSources(ctx.db, reporter, parsed);
  const rows = await toRows(ctx.db, reporter, parsed);
  await appendConnections(ctx.db, reporter.networkId, rows, ctx.clock.now());
  return rows.length;
}

/** GET /v1/logs/connections: one page of the network's log, ascending by recording order. */
export async function connectionsPage(ctx: AppContext, networkId: string, query: ConnectionLogRequest) {
  const device = query.device === undefined ? undefined : await deviceOfFilter(ctx.db, networkId, query.device);
  let names: ReadonlyMap<string, string> = new Map();
  const fetch = async (afterSeq: number, rows: number) => {
    // A name, like an id, that no device of the network has selects nothing.
    if (device === null) return [];
    const found = await connectionsAfter(ctx.db, networkId, afterSeq, rows, device);
    names = await deviceNames(ctx.db, networkId, found);
    return found;
  };
  const present = (row: ConnectionRow) => presentConnection(ctx.logIds, row, names);
  return readPage(ctx, 'connections', networkId, query, ctx.clock.now(), fetch, present);
}

/**
 * The `device` filter as a device id: an id as given, a name looked up (as the CLI and the
 * console know devices by name); null for a name no device of the network has.
 */
async function deviceOfFilter(db: Db, networkId: string, device: string): Promise<string | null | undefined> {
  if (DEVICE_ID.test(device)) return device;
  if (!DEVICE_NAME.test(device)) throw invalidRequest(`device "${device}" is neither a device id (dev_…) nor a name`);
  return (await deviceIdByName(db, networkId, device)) ?? null;
}

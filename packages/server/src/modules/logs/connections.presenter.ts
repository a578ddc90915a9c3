/** Connection log rows → API entries: the allow-list of what leaves the server. */
import type { ConnectionEntryBody } from '@warren/contract';
import type { LogIds } from '../../lib/log-ids.js';
import { iso } from '../../lib/time.js';
import type { ConnectionRow } from './connections.repository.js';

/**
 * `names` holds the names of the page's devices (one query per page, not per entry): people
 * read names, and a deleted device's id stays with a null name.
 */
export function presentConnection(
  ids: LogIds,
  row: ConnectionRow,
  names: ReadonlyMap<string, string>,
): ConnectionEntryBody {
  const nameOf = (id: string | null) => (id === null ? null : (names.get(id) ?? null));
  return {
    id: ids.id('connection', Number(row.seq)),
    start: iso(Number(row.start_at)),
    end: iso(Number(row.end_at)),
    proto: row.proto,
    src: { deviceId: row.src_device_id, deviceName: nameOf(row.src_device_id), addr: row.src_addr },
    dst: { deviceId: row.dst_device_id, deviceName: nameOf(row.dst_device_id), addr: row.dst_addr },
    txBytes: Number(row.tx_bytes),
    rxBytes: Number(row.rx_bytes),
    txPackets: Number(row.tx_packets),
    rxPackets: Number(row.rx_packets),
    reportedBy: row.reported_by,
    logged: iso(Number(row.logged_at)),
  };
}

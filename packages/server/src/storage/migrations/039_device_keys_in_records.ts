/**
 * `devices.record_version` also moves when a device's node key or machine key changes: the
 * detail record carries both for `/api/v2`, whose device shows them as `nodeKey` and
 * `machineKey`, and servers keep detail records by this version (migration 021). A key changes
 * when a device logs in again with a new node key (Tailscale's clients rotate it at key expiry)
 * or a native device re-keys, never with a heartbeat, so records are rebuilt no more often.
 */
import type { Kysely } from 'kysely';
import { moveRecordVersionOn, SHOWN } from './021_device_detail_version.js';

export function up(db: Kysely<unknown>): Promise<void> {
  return moveRecordVersionOn(db, [...SHOWN, 'node_key', 'machine_key']);
}

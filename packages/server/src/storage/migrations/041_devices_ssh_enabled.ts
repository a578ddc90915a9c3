/**
 * `devices.ssh_enabled`: 1 while the device's last Hostinfo carried SSH host keys, which a
 * Tailscale client reports while it runs Tailscale SSH (`tailscale up --ssh`); `/api/v2`'s
 * device shows it as `sshEnabled`. A column rather than a read of the Hostinfo, so lists read
 * no Hostinfo; `record_version` moves with it, as detail records are kept by that version
 * (migrations 021, 039). No row has it yet: SSH host keys were not kept before this version.
 */
import type { Kysely } from 'kysely';
import { moveRecordVersionOn, SHOWN } from './021_device_detail_version.js';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('devices')
    .addColumn('ssh_enabled', 'integer', (col) => col.notNull().defaultTo(0))
    .execute();
  await moveRecordVersionOn(db, [...SHOWN, 'node_key', 'machine_key', 'ssh_enabled']);
}

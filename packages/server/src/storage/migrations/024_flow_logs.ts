/**
 * Network flow logs from Tailscale clients (control/tailscale/flow-log.routes.ts):
 *
 * - `networks.flow_logs` (0/1): whether Tailscale-protocol devices are told to log their
 *   flows and upload them to Warren. Off by default: a client started with
 *   `--no-logs-no-support` stops itself when its network asks for flow logs.
 * - `devices.flow_log_id`: the public log id of the device's upload stream (hex SHA-256 of the
 *   private id its map carries), the only form in which that credential is kept; an upload
 *   names its device through it, hence the index.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('networks')
    .addColumn('flow_logs', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('devices').addColumn('flow_log_id', 'text').execute();
  await db.schema.createIndex('devices_flow_log_id').on('devices').column('flow_log_id').execute();
}

/**
 * The audit log's "changes only" view (`GET /v1/logs/audit?changes=true`): the entries of calls
 * that changed state, which carry an `action`. Reads and node heartbeats are most of the log (a
 * heartbeat per device every few seconds), so without an index of its own that view would scan
 * every one of them to find a page of changes. A partial index on the same (network_id, seq)
 * keyset holds only the changes, so a page of them costs what a page of the whole log does.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createIndex('audit_network_changes')
    .on('audit_log')
    .columns(['network_id', 'seq'])
    .where(sql.ref('action'), 'is not', null)
    .execute();
}

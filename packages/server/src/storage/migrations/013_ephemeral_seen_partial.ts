/**
 * The ephemeral sweeper's index holds ephemeral devices only. Keyed (ephemeral, last_seen_at)
 * over every device, it cost each heartbeat of every device an index entry moved (up to two
 * pages written) for the sake of the few ephemeral ones; the sweeper's query (ephemeral = 1 and
 * an age on last_seen_at) is what the partial index is made for, on both dialects.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('devices_ephemeral_seen').execute();
  await db.schema
    .createIndex('devices_ephemeral_seen')
    .on('devices')
    .column('last_seen_at')
    .where(sql.ref('ephemeral'), '=', 1)
    .execute();
}

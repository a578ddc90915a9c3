/**
 * `networks.presence_epoch`: bumped whenever a device of the network goes online or offline by
 * a call (a heartbeat after silence, a disconnect). Netmaps read presence from a snapshot per
 * network; this number tells every instance when its snapshot went stale, without a clock.
 * Time-outs (60 s without a heartbeat) need no write: a snapshot knows when its first device
 * times out.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('networks')
    .addColumn('presence_epoch', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
}

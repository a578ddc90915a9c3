/**
 * Events and webhooks. `events` is the outbox: each row is written in the transaction of the
 * change it describes (core/unit-of-work.ts), under the network's audit lock, so `seq` order
 * is commit order within a network. Webhook endpoints read it through their own cursor
 * (`event_cursor`, the last event they have fanned out); each delivery is one row that the
 * instance holding the endpoint's lease works through. `announcements` holds the last state
 * announced by an event of each device and key, so a detector emits each transition once.
 */
import { type Kysely, PostgresAdapter } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  const bigint = 'bigint' as const;
  const serial = (table: string) =>
    db.schema
      .createTable(table)
      .addColumn('seq', postgres ? 'bigserial' : 'integer', (c) =>
        postgres ? c.primaryKey() : c.primaryKey().autoIncrement(),
      );

  await serial('events')
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('time', bigint, (c) => c.notNull())
    .addColumn('actor', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    // Set for an event meant for one endpoint only (webhook.test).
    .addColumn('webhook_id', 'text')
    .execute();
  await db.schema.createIndex('events_network_seq').on('events').columns(['network_id', 'seq']).execute();
  await db.schema.createIndex('events_network_time').on('events').columns(['network_id', 'time', 'seq']).execute();

  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_delivery_at', bigint)
    .addColumn('event_cursor', bigint, (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', bigint, (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.createIndex('webhooks_network').on('webhooks').columns(['network_id', 'created_at']).execute();

  await serial('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('event_seq', bigint, (c) => c.notNull())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('next_attempt_at', bigint)
    .addColumn('created_at', bigint, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('deliveries_due')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'state', 'next_attempt_at', 'seq'])
    .execute();
  await db.schema
    .createIndex('deliveries_webhook_seq')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'seq'])
    .execute();

  // The last state announced of each subject (device presence, key expiry): a detector claims
  // a transition with a conditional upsert on this row, so it is emitted once by one instance.
  await db.schema
    .createTable('announcements')
    .addColumn('subject', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .execute();
}

/**
 * The initial schema. Indexes follow the queries: every list is scoped by network and
 * ordered or filtered by the columns that lead each index.
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

  await db.schema
    .createTable('networks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('next_addr_index', bigint, (c) => c.notNull().defaultTo(1))
    .addColumn('netmap_epoch', bigint, (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('users')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('login_name', 'text', (c) => c.notNull())
    .addColumn('display_name', 'text', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_seen_at', bigint)
    .addUniqueConstraint('users_network_login', ['network_id', 'login_name'])
    .execute();

  await db.schema
    .createTable('keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('secret_hash', 'text', (c) => c.notNull().unique())
    .addColumn('name', 'text')
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('reusable', 'integer', (c) => c.notNull())
    .addColumn('ephemeral', 'integer', (c) => c.notNull())
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('rate_limit', 'integer')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('expires_at', bigint, (c) => c.notNull())
    .addColumn('revoked_at', bigint)
    .addColumn('used_at', bigint)
    .addColumn('uses', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_used_at', bigint)
    .addColumn('created_by', 'text')
    .execute();
  await db.schema.createIndex('keys_network_created').on('keys').columns(['network_id', 'created_at']).execute();

  await db.schema
    .createTable('policies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('etag', 'text', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('created_by', 'text')
    .addUniqueConstraint('policies_network_version', ['network_id', 'version'])
    .execute();

  await db.schema
    .createTable('devices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull().references('networks.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('os', 'text', (c) => c.notNull())
    .addColumn('user_id', 'text')
    .addColumn('tags', 'text', (c) => c.notNull())
    .addColumn('node_key', 'text', (c) => c.notNull())
    .addColumn('addr_index', bigint, (c) => c.notNull())
    .addColumn('client_version', 'text')
    .addColumn('key_id', 'text')
    .addColumn('ephemeral', 'integer', (c) => c.notNull())
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addColumn('last_seen_at', bigint)
    .addColumn('disconnected', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('expires_at', bigint)
    .addColumn('node_token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('netmap_version', bigint, (c) => c.notNull().defaultTo(1))
    .addColumn('netmap_hash', 'text')
    .addUniqueConstraint('devices_network_name', ['network_id', 'name'])
    .addUniqueConstraint('devices_network_addr', ['network_id', 'addr_index'])
    .addUniqueConstraint('devices_network_node_key', ['network_id', 'node_key'])
    .execute();
  await db.schema.createIndex('devices_network_created').on('devices').columns(['network_id', 'created_at']).execute();
  await db.schema.createIndex('devices_network_user').on('devices').columns(['network_id', 'user_id']).execute();
  await db.schema.createIndex('devices_network_seen').on('devices').columns(['network_id', 'last_seen_at']).execute();

  await db.schema
    .createTable('device_tags')
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('tag', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('device_tags_pk', ['network_id', 'tag', 'device_id'])
    .execute();
  await db.schema.createIndex('device_tags_device').on('device_tags').column('device_id').execute();

  await db.schema
    .createTable('routes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('device_id', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('advertised', 'integer', (c) => c.notNull())
    .addColumn('auto_approved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('approved_at', bigint)
    .addColumn('approved_by', 'text')
    .addColumn('created_at', bigint, (c) => c.notNull())
    .addUniqueConstraint('routes_device_prefix', ['device_id', 'prefix'])
    .execute();
  await db.schema.createIndex('routes_network_state').on('routes').columns(['network_id', 'state']).execute();

  await serial('connections')
    .addColumn('network_id', 'text', (c) => c.notNull())
    .addColumn('logged_at', bigint, (c) => c.notNull())
    .addColumn('start_at', bigint, (c) => c.notNull())
    .addColumn('end_at', bigint, (c) => c.notNull())
    .addColumn('proto', 'text', (c) => c.notNull())
    .addColumn('src_device_id', 'text')
    .addColumn('src_addr', 'text', (c) => c.notNull())
    .addColumn('dst_device_id', 'text')
    .addColumn('dst_addr', 'text', (c) => c.notNull())
    .addColumn('tx_bytes', bigint, (c) => c.notNull())
    .addColumn('rx_bytes', bigint, (c) => c.notNull())
    .addColumn('tx_packets', bigint, (c) => c.notNull())
    .addColumn('rx_packets', bigint, (c) => c.notNull())
    .addColumn('reported_by', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('connections_network_seq').on('connections').columns(['network_id', 'seq']).execute();
  await db.schema
    .createIndex('connections_network_logged')
    .on('connections')
    .columns(['network_id', 'logged_at', 'seq'])
    .execute();
  await db.schema
    .createIndex('connections_src_seq')
    .on('connections')
    .columns(['network_id', 'src_device_id', 'seq'])
    .execute();
  await db.schema
    .createIndex('connections_dst_seq')
    .on('connections')
    .columns(['network_id', 'dst_device_id', 'seq'])
    .execute();

  await serial('audit_log')
    .addColumn('network_id', 'text')
    .addColumn('time', bigint, (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('key_name', 'text')
    .addColumn('device_id', 'text')
    .addColumn('method', 'text', (c) => c.notNull())
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('client_addr', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('target', 'text')
    .execute();
  await db.schema.createIndex('audit_network_seq').on('audit_log').columns(['network_id', 'seq']).execute();
  await db.schema.createIndex('audit_network_time').on('audit_log').columns(['network_id', 'time', 'seq']).execute();
  await db.schema.createIndex('audit_network_key').on('audit_log').columns(['network_id', 'key_id', 'seq']).execute();

  await db.schema
    .createTable('rate_limit_hits')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('at', bigint, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_limit_bucket_at').on('rate_limit_hits').columns(['bucket', 'at']).execute();
}

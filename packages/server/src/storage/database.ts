/**
 * Opens the database named by a URL — `sqlite:PATH`, `sqlite::memory:` or `postgres://…` —
 * and migrates it. Both dialects share one schema and one migration set.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, Migrator, PostgresAdapter, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import * as initial from './migrations/001_initial.js';
import * as devices from './migrations/002_devices.js';
import * as presenceEpoch from './migrations/003_presence_epoch.js';
import * as rateLimitSlots from './migrations/004_rate_limit_slots.js';
import * as serverSecrets from './migrations/005_server_secrets.js';
import * as people from './migrations/006_people.js';
import * as events from './migrations/007_events.js';
import * as netmapChanges from './migrations/008_netmap_changes.js';
import * as networkUsage from './migrations/009_network_usage.js';
import * as sealedSsoSecrets from './migrations/010_sealed_sso_secrets.js';
import * as deviceRecordVersion from './migrations/011_device_record_version.js';
import * as deviceChangeSeq from './migrations/012_device_change_seq.js';
import * as ephemeralSeenPartial from './migrations/013_ephemeral_seen_partial.js';
import * as presenceChanges from './migrations/014_presence_changes.js';
import * as rateLimitHit from './migrations/015_rate_limit_hit.js';
import * as unloggedRateLimits from './migrations/016_unlogged_rate_limits.js';
import * as heartbeatHotUpdates from './migrations/017_heartbeat_hot_updates.js';
import * as deviceApprovalExpiry from './migrations/018_device_approval_expiry.js';
import * as tailscaleDevices from './migrations/019_tailscale_devices.js';
import * as auditChanges from './migrations/020_audit_changes.js';
import * as deviceDetailVersion from './migrations/021_device_detail_version.js';
import * as oauthClients from './migrations/022_oauth_clients.js';
import * as machineLogins from './migrations/023_machine_logins.js';
import * as flowLogs from './migrations/024_flow_logs.js';
import * as networkDnsDerp from './migrations/025_network_dns_derp.js';
import * as userDeviceUsage from './migrations/026_user_device_usage.js';
import * as rateLimitHitMany from './migrations/027_rate_limit_hit_many.js';
import * as boundedHostinfo from './migrations/028_bounded_hostinfo.js';
import * as deviceListStamps from './migrations/029_device_list_stamps.js';
import * as deviceListStampsOnce from './migrations/030_device_list_stamps_once.js';
import * as networkNamesInDeviceRecords from './migrations/031_network_names_in_device_records.js';
import * as readStamps from './migrations/032_read_stamps.js';
import * as readStampsKeysUsers from './migrations/033_read_stamps_keys_users.js';
import * as readStampsRoutes from './migrations/034_read_stamps_routes.js';
import * as readStampsOAuthClients from './migrations/035_read_stamps_oauth_clients.js';
import * as rateLimitBucketsHotUpdates from './migrations/036_rate_limit_buckets_hot_updates.js';
import * as rateLimitSweptTo from './migrations/037_rate_limit_swept_to.js';
import * as routeChangeSeq from './migrations/038_route_change_seq.js';
import * as deviceKeysInRecords from './migrations/039_device_keys_in_records.js';
import * as devicesMachineKey from './migrations/040_devices_machine_key.js';
import * as devicesSshEnabled from './migrations/041_devices_ssh_enabled.js';
import * as sshChecks from './migrations/042_ssh_checks.js';
import * as devicesMachineKeyCreated from './migrations/043_devices_machine_key_created.js';
import * as deviceRecordStamps from './migrations/044_device_record_stamps.js';
import * as oauthClientExpiry from './migrations/045_oauth_client_expiry.js';
import * as policyEtagFullDigest from './migrations/046_policy_etag_full_digest.js';
import type { Database } from './schema.js';
import './schema-events.js';
import './schema-netmap.js';
import { type ChangeChannel, listenPostgres, signallingConnection } from './change-signal.js';
import { registerPool } from './pg-statements.js';
import { commitCounter, registerConnections, withStatementCache } from './sqlite-statements.js';
import { startWalCheckpointer } from './wal-checkpointer.js';

export type Db = Kysely<Database>;

/** Every migration, in order. */
const MIGRATIONS = {
  '001_initial': initial,
  '002_devices': devices,
  '003_presence_epoch': presenceEpoch,
  '004_rate_limit_slots': rateLimitSlots,
  '005_server_secrets': serverSecrets,
  '006_people': people,
  '007_events': events,
  '008_netmap_changes': netmapChanges,
  '009_network_usage': networkUsage,
  '010_sealed_sso_secrets': sealedSsoSecrets,
  '011_device_record_version': deviceRecordVersion,
  '012_device_change_seq': deviceChangeSeq,
  '013_ephemeral_seen_partial': ephemeralSeenPartial,
  '014_presence_changes': presenceChanges,
  '015_rate_limit_hit': rateLimitHit,
  '016_unlogged_rate_limits': unloggedRateLimits,
  '017_heartbeat_hot_updates': heartbeatHotUpdates,
  '018_device_approval_expiry': deviceApprovalExpiry,
  '019_tailscale_devices': tailscaleDevices,
  '020_audit_changes': auditChanges,
  '021_device_detail_version': deviceDetailVersion,
  '022_oauth_clients': oauthClients,
  '023_machine_logins': machineLogins,
  '024_flow_logs': flowLogs,
  '025_network_dns_derp': networkDnsDerp,
  '026_user_device_usage': userDeviceUsage,
  '027_rate_limit_hit_many': rateLimitHitMany,
  '028_bounded_hostinfo': boundedHostinfo,
  '029_device_list_stamps': deviceListStamps,
  '030_device_list_stamps_once': deviceListStampsOnce,
  '031_network_names_in_device_records': networkNamesInDeviceRecords,
  '032_read_stamps': readStamps,
  '033_read_stamps_keys_users': readStampsKeysUsers,
  '034_read_stamps_routes': readStampsRoutes,
  '035_read_stamps_oauth_clients': readStampsOAuthClients,
  '036_rate_limit_buckets_hot_updates': rateLimitBucketsHotUpdates,
  '037_rate_limit_swept_to': rateLimitSweptTo,
  '038_route_change_seq': routeChangeSeq,
  '039_device_keys_in_records': deviceKeysInRecords,
  '040_devices_machine_key': devicesMachineKey,
  '041_devices_ssh_enabled': devicesSshEnabled,
  '042_ssh_checks': sshChecks,
  '043_devices_machine_key_created': devicesMachineKeyCreated,
  '044_device_record_stamps': deviceRecordStamps,
  '045_oauth_client_expiry': oauthClientExpiry,
  '046_policy_etag_full_digest': policyEtagFullDigest,
};
export type Dialect = 'sqlite' | 'postgres';

export interface Storage {
  db: Db;
  dialect: Dialect;
  /** Where this process hears of committed epoch moves (change-signal.ts). */
  changes: ChangeChannel;
  close(): Promise<void>;
}

// int8 (bigint, count(*)) arrives from pg as a string; every value we keep there (epoch
// milliseconds, counters) fits a double, so read them as numbers like SQLite does.
pg.types.setTypeParser(20, (value) => Number(value));

export interface OpenOptions {
  /** PostgreSQL only: the schema to use (created if missing); tests give each run its own. */
  schema?: string;
  /** PostgreSQL pool size. */
  poolSize?: number;
}

export async function openStorage(url: string, options: OpenOptions = {}): Promise<Storage> {
  if (url.startsWith('postgres:') || url.startsWith('postgresql:')) {
    const storage = await openPostgres(url, options);
    // Kysely looks for its own tables in every schema unless told which one is ours; another
    // schema's half-made kysely_migration_lock would otherwise make a concurrent open fail.
    await migratePostgres(storage.db, options.schema ? { migrationTableSchema: options.schema } : {});
    return storage;
  }
  const storage = openSqlite(url);
  const path = url.slice('sqlite:'.length);
  await (path === ':memory:' ? migrate(storage.db) : migrateSqliteFile(path));
  return storage;
}

function openSqlite(url: string): Storage {
  if (!url.startsWith('sqlite:'))
    throw new Error(`unsupported database URL "${url}" (use sqlite:PATH or postgres://…)`);
  const path = url.slice('sqlite:'.length);
  if (path !== ':memory:') makeFolder(dirname(path));
  const sqlite = new SqliteDatabase(path);
  // WAL lets readers proceed while one writer commits; NORMAL sync is durable across
  // process crashes and much faster than FULL. busy_timeout covers a second process (init).
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  const writer = withStatementCache(sqlite);
  // A second connection reads what is committed while the first is inside a transaction
  // (sqlite-statements.ts), and a thread of its own checkpoints the log (wal-checkpointer.ts);
  // an in-memory database is private to its one connection and has no log.
  const file = path !== ':memory:';
  const readConnection = file ? readOnly(path) : undefined;
  const reader = readConnection && withStatementCache(readConnection);
  const version = readConnection && commitCounter(readConnection);
  // Kysely writes through the connection that announces committed changes (change-signal.ts).
  const { connection, channel } = signallingConnection(writer, sqlite, version);
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
  const checkpointer = file ? startWalCheckpointer(sqlite, path) : undefined;
  registerConnections(db, { writer, reader, version });
  return {
    db,
    dialect: 'sqlite',
    changes: channel,
    close: async () => {
      await channel.close();
      await checkpointer?.stop();
      await db.destroy();
      reader?.close();
    },
  };
}

/**
 * Creates a database file's folder and its missing parents, one level at a time. Not
 * `mkdirSync(dir, { recursive: true })`: where a parent exists but cannot hold a new folder
 * (under /proc or /sys, a stale mount) the kernel answers ENOENT, and Node's recursive walk
 * takes that for a missing parent and retries forever at full CPU, so `warren serve --db
 * sqlite:/proc/x/warren.db` hung without a word. Here an ENOENT once the parent exists is final.
 */
function makeFolder(dir: string): void {
  if (existsSync(dir)) return;
  const parent = dirname(dir);
  if (parent !== dir) makeFolder(parent);
  try {
    mkdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}

function readOnly(path: string): SqliteDatabase.Database {
  const connection = new SqliteDatabase(path, { readonly: true });
  connection.pragma('busy_timeout = 5000');
  return connection;
}

async function openPostgres(url: string, options: OpenOptions): Promise<Storage> {
  const { schema } = options;
  if (schema && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  if (schema) {
    const setup = new pg.Client({ connectionString: url });
    await setup.connect();
    try {
      await setup.query(`create schema if not exists ${schema}`);
    } catch (error) {
      // Two processes creating the schema at once: the loser sees a duplicate; that is fine.
      if (!['23505', '42P06'].includes((error as { code?: string }).code ?? '')) throw error;
    } finally {
      await setup.end();
    }
  }
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  registerPool(db, pool);
  const changes = listenPostgres(url);
  return {
    db,
    dialect: 'postgres',
    changes,
    close: async () => {
      await changes.close();
      await db.destroy();
    },
  };
}

async function migrate(
  db: Db,
  options: { disableTransactions?: boolean; migrationTableSchema?: string } = {},
): Promise<void> {
  // On PostgreSQL Kysely's migrator takes an advisory lock first, so two instances starting
  // at once on one database run each migration exactly once.
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => MIGRATIONS },
    ...options,
  });
  const { error } = await migrator.migrateToLatest();
  if (error) throw error;
}

/**
 * PostgreSQL's invalid_schema_name and undefined_table: what the table listing below fails with
 * when another session drops a schema or a table while it runs.
 */
const LISTING_RACES = new Set(['3F000', '42P01']);

/**
 * Kysely's migrator first lists the tables of every schema in the database, asking PostgreSQL
 * about each schema and each table by name (`has_schema_privilege(nspname, …)`,
 * `pg_get_serial_sequence(…)`): a schema or table that another session drops while that query
 * runs fails it with invalid_schema_name or undefined_table, naming the other schema, though ours
 * is intact. The listing changes nothing and a failed migration rolls back whole, so it is run
 * again.
 */
async function migratePostgres(db: Db, options: { migrationTableSchema?: string }): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await migrate(db, options);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === undefined || !LISTING_RACES.has(code) || attempt === 10) throw error;
    }
  }
}

const sqliteMigrations = new Map<string, Promise<void>>();

/**
 * Kysely takes no lock on SQLite, so a file is migrated on a connection of its own inside
 * BEGIN IMMEDIATE: another process waits (busy_timeout) until the schema is complete, and
 * another open in this process waits its turn on the promise chain (a synchronous wait
 * here would block the event loop that the first migration runs on).
 */
function migrateSqliteFile(path: string): Promise<void> {
  const key = resolve(path);
  const run = (sqliteMigrations.get(key) ?? Promise.resolve())
    .catch(() => undefined)
    .then(async () => {
      const connection = new SqliteDatabase(path);
      connection.pragma('busy_timeout = 30000');
      const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: connection }) });
      try {
        connection.exec('BEGIN IMMEDIATE');
        try {
          await migrate(db, { disableTransactions: true });
          connection.exec('COMMIT');
        } catch (error) {
          if (connection.inTransaction) connection.exec('ROLLBACK');
          throw error;
        }
      } finally {
        await db.destroy();
      }
    });
  sqliteMigrations.set(key, run);
  return run;
}

export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

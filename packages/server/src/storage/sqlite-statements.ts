/**
 * better-sqlite3 compiles SQL text on every prepare(), and Kysely prepares each query it runs:
 * under a fleet's heartbeats, compiling was a seventh of the server's time. Most queries repeat
 * with new parameters only, so compiled statements are kept and reused, the least recently
 * used dropped past a bound (texts that vary, such as IN lists of different lengths, come and
 * go). A statement is never shared while in use: Kysely runs one query at a time on SQLite's
 * single connection, and Warren does not stream results.
 */
import type SqliteDatabase from 'better-sqlite3';
import type { SqliteDatabase as KyselySqliteDatabase, SqliteStatement } from 'kysely';

export interface StatementCache extends KyselySqliteDatabase {
  prepare(sql: string): SqliteStatement & Pick<SqliteDatabase.Statement, 'readonly'>;
  /** True while a transaction is open on the connection (its writes not yet committed). */
  readonly inTransaction: boolean;
  /**
   * Write statements prepared so far (BEGIN and COMMIT included). Every statement, Kysely's
   * and ours, is prepared here right before it runs, so this moves before any write does.
   */
  readonly writes: number;
}

/** A SQLite database's writing connection (Kysely's) and, for a file, a read-only one beside it. */
export interface SqliteConnections {
  writer: StatementCache;
  reader?: StatementCache;
  /** See committedVersion; absent for an in-memory database, which has no second connection. */
  version?: () => number;
  /** The counter as last read, with the turn and the writer's write count it was read at. */
  read?: { value: number; turn: number; writes: number };
}

/**
 * The connections behind each SQLite Kysely instance, for queries that run synchronously
 * (compiled-query.ts). A transaction's Kysely instance is never registered.
 */
const registered = new WeakMap<object, SqliteConnections>();

export function registerConnections(db: object, connections: SqliteConnections): void {
  registered.set(db, connections);
}

/**
 * Runs a statement at once when it can only see committed rows, or returns undefined when it
 * must wait its turn on Kysely's queue. Outside a transaction the writing connection answers
 * directly: nothing interleaves with a synchronous statement. While a transaction is open there
 * (a unit of work, an audit batch), a read goes to the read-only connection, which WAL lets see
 * every commit and nothing uncommitted, so API reads do not queue behind writers.
 */
export function runCommitted(db: object, sql: string, values: readonly unknown[]): unknown[] | undefined {
  const connections = registered.get(db);
  if (!connections) return undefined;
  const { writer, reader } = connections;
  if (!writer.inTransaction) {
    const statement = writer.prepare(sql);
    if (statement.reader) return statement.all(values);
    statement.run(values);
    return [];
  }
  if (reader) {
    const statement = reader.prepare(sql);
    if (statement.readonly) return statement.all(values);
  }
  return undefined;
}

/**
 * A number that moves whenever anything commits to the database: this process's writer or
 * another process on the same file (`warren keys set-limit`). SQLite's `PRAGMA data_version`
 * changes on a connection each time *another* connection commits; the read-only connection
 * commits nothing, so on it every commit counts. Reading it costs about a third of the API
 * key's lookup (3 µs against 11 µs in a loop), which makes it the check of caches that must
 * never answer with what a commit has changed (committed-cache.ts, the device index).
 */
export function commitCounter(readOnly: SqliteDatabase.Database): () => number {
  const statement = readOnly.prepare('pragma data_version').pluck();
  return () => statement.get() as number;
}

/**
 * The database's commit counter (commitCounter), or undefined where there is none (PostgreSQL,
 * memory). Read once per turn of the event loop while this process writes nothing: every call
 * of a busy turn checked it again (twice per API call, a tenth of a list call's time), and a
 * value read earlier in the same turn says as much. This process's own writes are seen at once
 * (preparing any write statement drops the value read); another process's commit is seen from
 * the next turn, which any call that process's commit could have caused starts in.
 */
export function committedVersion(db: object): number | undefined {
  const connections = registered.get(db);
  if (!connections?.version) return undefined;
  const writes = connections.writer.writes;
  const read = connections.read;
  if (read && read.turn === turn && read.writes === writes) return read.value;
  const value = connections.version();
  connections.read = { value, writes, turn };
  if (!turnEnding) {
    turnEnding = true;
    setImmediate(endTurn);
  }
  return value;
}

/** Turns of the event loop in which a commit counter was read; see committedVersion. */
let turn = 0;
let turnEnding = false;
function endTurn(): void {
  turn++;
  turnEnding = false;
}

export function withStatementCache(database: SqliteDatabase.Database, capacity = 500): StatementCache {
  const statements = new Map<string, SqliteDatabase.Statement>();
  let writes = 0;
  return {
    get inTransaction() {
      return database.inTransaction;
    },
    get writes() {
      return writes;
    },
    prepare(sql: string): SqliteDatabase.Statement {
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = database.prepare(sql);
        if (statements.size >= capacity) statements.delete(statements.keys().next().value as string);
      }
      statements.set(sql, statement);
      if (!statement.reader) writes++;
      return statement;
    },
    close(): void {
      statements.clear();
      database.close();
    },
  };
}

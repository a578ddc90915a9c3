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
  /** True while a transaction is open on the connection (its writes not yet committed). */
  readonly inTransaction: boolean;
}

/**
 * The statement cache behind each SQLite Kysely instance, for queries that run synchronously
 * (compiled-query.ts). A transaction's Kysely instance is never registered.
 */
const connections = new WeakMap<object, StatementCache>();

export function registerConnection(db: object, statements: StatementCache): void {
  connections.set(db, statements);
}

export function sqliteConnection(db: object): StatementCache | undefined {
  return connections.get(db);
}

export function withStatementCache(database: SqliteDatabase.Database, capacity = 500): StatementCache {
  const statements = new Map<string, SqliteStatement>();
  return {
    get inTransaction() {
      return database.inTransaction;
    },
    prepare(sql: string): SqliteStatement {
      let statement = statements.get(sql);
      if (statement) {
        statements.delete(sql);
      } else {
        statement = database.prepare(sql);
        if (statements.size >= capacity) statements.delete(statements.keys().next().value as string);
      }
      statements.set(sql, statement);
      return statement;
    },
    close(): void {
      statements.clear();
      database.close();
    },
  };
}

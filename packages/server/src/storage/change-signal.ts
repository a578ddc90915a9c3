/**
 * The signal that a network's epochs moved, pushed to every process on the database when the
 * change commits, so a map stream waits for it instead of asking the database over and over.
 *
 * A change calls `signalChange(trx, networkId)` inside the transaction that bumps the epoch:
 *  - on PostgreSQL that is `pg_notify`, which the server delivers at commit (and never for a
 *    rolled-back transaction) to every connection listening on the channel, whichever
 *    instance it belongs to. Each process holds one such connection (`listenPostgres`); when
 *    it is lost, the process reconnects with backoff and then asks its listeners to read
 *    again what they follow, as any number of signals may have been missed meanwhile;
 *  - on SQLite the same call is a statement the writing connection keeps to itself
 *    (`signallingConnection`): the network is remembered and announced to this process once
 *    the transaction's COMMIT ran, and forgotten on ROLLBACK. Another process writing the same
 *    file (an admin command beside `warren serve`) cannot signal this one, so a SQLite
 *    process also checks, once a second, SQLite's commit counter (`PRAGMA data_version`,
 *    which costs no table read) and asks its listeners to read again when another
 *    connection committed.
 * The signal says only "this network moved": listeners read the epochs themselves, so a signal
 * that arrives twice or for a network nobody here follows costs one small read at most.
 *
 * The same channel carries the end of a machine login, for the register request waiting on it
 * (modules/devices/login/login-signals.ts), under a subject that cannot be a network id
 * (`login:…`): each listener acts on the subjects it follows and ignores the others.
 */
import { EventEmitter } from 'node:events';
import type SqliteDatabase from 'better-sqlite3';
import { type Kysely, PostgresAdapter, sql } from 'kysely';
import pg from 'pg';
import type { StatementCache } from './sqlite-statements.js';

/** The PostgreSQL channel every instance listens on (payload: the network id). */
export const CHANGE_CHANNEL = 'warren_changes';

/** The statement SQLite's signalling connection takes as the signal (never sent to SQLite). */
const SQLITE_SIGNAL = 'select ? as warren_change_signal';

export interface ChangeListener {
  /** A change to this network (or another subject) committed. */
  changed(networkId: string): void;
  /** Signals may have been missed (a lost connection, another process's commit): read again. */
  resync(): void;
}

/** Where a process's listeners subscribe; one per open database. */
export interface ChangeChannel {
  subscribe(listener: ChangeListener): () => void;
  close(): Promise<void>;
}

/** Inside the transaction that moves the network's epochs; delivered when it commits. */
// biome-ignore lint/suspicious/noExplicitAny: any schema; the statement names no table.
export async function signalChange(trx: Kysely<any>, networkId: string): Promise<void> {
  // The dialect is read off the executor here: database.ts opens the channels this file makes.
  if (trx.getExecutor().adapter instanceof PostgresAdapter)
    await sql`select pg_notify(${CHANGE_CHANNEL}, ${networkId})`.execute(trx);
  else await sql`select ${networkId} as warren_change_signal`.execute(trx);
}

/** The SQL of the signal on PostgreSQL, for statements that bump epochs in one round trip. */
export const pgNotifySql = (networkId: string) => sql`pg_notify(${CHANGE_CHANNEL}, ${networkId})`;

class Listeners {
  private readonly emitter = new EventEmitter();
  constructor() {
    // A process may hold many subscriptions (tests open many apps); each is intended.
    this.emitter.setMaxListeners(0);
  }
  subscribe(listener: ChangeListener): () => void {
    const changed = (id: string) => listener.changed(id);
    const resync = () => listener.resync();
    this.emitter.on('changed', changed).on('resync', resync);
    return () => {
      this.emitter.off('changed', changed).off('resync', resync);
    };
  }
  changed(networkId: string): void {
    this.emitter.emit('changed', networkId);
  }
  resync(): void {
    this.emitter.emit('resync');
  }
  get count(): number {
    return this.emitter.listenerCount('changed');
  }
}

/** How often a SQLite process looks for commits made by another process on its file. */
const FOREIGN_COMMIT_CHECK_MS = 1_000;

/**
 * Wraps SQLite's writing connection (the one Kysely runs on) so that the signal statement is
 * kept for the transaction it is in and announced after its COMMIT. Also returns the channel
 * listeners subscribe to. `commitCounter` reads `PRAGMA data_version` on another connection to
 * the file (absent for an in-memory database, which no other process can open).
 */
export function signallingConnection(
  writer: StatementCache,
  database: SqliteDatabase.Database,
  commitCounter?: () => number,
): { connection: StatementCache; channel: ChangeChannel } {
  const listeners = new Listeners();
  const pending = new Set<string>();
  const announce = () => {
    const ids = [...pending];
    pending.clear();
    for (const id of ids) listeners.changed(id);
  };
  const signal = {
    reader: true,
    readonly: true,
    all(parameters: readonly unknown[]) {
      pending.add(String(parameters[0]));
      // Outside a transaction the change before it has already committed.
      if (!database.inTransaction) announce();
      return [];
    },
  };
  const connection: StatementCache = {
    get inTransaction() {
      return writer.inTransaction;
    },
    get writes() {
      return writer.writes;
    },
    prepare(text: string) {
      if (text === SQLITE_SIGNAL) return signal as unknown as ReturnType<StatementCache['prepare']>;
      const statement = writer.prepare(text);
      const command = text.trim().toLowerCase();
      if (command !== 'commit' && command !== 'rollback') return statement;
      // Kysely runs COMMIT and ROLLBACK as statements; what was signalled inside goes with them.
      return new Proxy(statement, {
        get(target, property) {
          if (property !== 'run') return Reflect.get(target, property, target);
          return (...args: unknown[]) => {
            try {
              return (target.run as (...a: unknown[]) => unknown)(...args);
            } finally {
              if (command === 'commit' && !database.inTransaction) announce();
              else pending.clear();
            }
          };
        },
      });
    },
    close() {
      writer.close();
    },
  };

  let timer: NodeJS.Timeout | undefined;
  let seen = commitCounter?.();
  const check = () => {
    if (!commitCounter) return;
    // The counter moves for every commit by another connection, this process's writer
    // included, so it cannot tell whose commit it was: read again either way. A resync is
    // one small read per followed network, once a second at most.
    const counter = commitCounter();
    if (counter !== seen) {
      seen = counter;
      listeners.resync();
    }
  };
  const channel: ChangeChannel = {
    subscribe(listener) {
      const unsubscribe = listeners.subscribe(listener);
      if (commitCounter && !timer) {
        timer = setInterval(check, FOREIGN_COMMIT_CHECK_MS);
        timer.unref();
      }
      return () => {
        unsubscribe();
        if (listeners.count === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
      };
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };
  return { connection, channel };
}

/** Backoff between attempts to listen again: from a quarter second up to five. */
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 5_000;

/**
 * One dedicated PostgreSQL connection per process, listening on CHANGE_CHANNEL. It is opened
 * on the first subscription. A lost connection is opened again with backoff; once it listens
 * again every listener is asked to resync, which is the catch-up read of what changed while
 * nothing could be heard.
 */
export function listenPostgres(url: string): ChangeChannel {
  const listeners = new Listeners();
  let client: pg.Client | undefined;
  let closed = false;
  let starting = false;
  let retryMs = RETRY_MIN_MS;
  let retry: NodeJS.Timeout | undefined;

  const connect = async (): Promise<void> => {
    if (closed || client || starting) return;
    starting = true;
    const next = new pg.Client({ connectionString: url });
    const lost = () => {
      if (client !== next) return;
      client = undefined;
      next.removeAllListeners('notification');
      next.end().catch(() => {});
      schedule();
    };
    next.on('error', lost);
    next.on('end', lost);
    next.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL && message.payload) listeners.changed(message.payload);
    });
    try {
      await next.connect();
      await next.query(`listen ${CHANGE_CHANNEL}`);
      if (closed) {
        await next.end();
        return;
      }
      client = next;
      retryMs = RETRY_MIN_MS;
      // Whatever committed before this connection listened (since the subscription, or while
      // the last connection was lost) was heard by no one here.
      listeners.resync();
    } catch {
      next.end().catch(() => {});
      schedule();
    } finally {
      starting = false;
    }
  };
  const schedule = () => {
    if (closed || retry) return;
    retry = setTimeout(() => {
      retry = undefined;
      void connect();
    }, retryMs);
    retry.unref();
    retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
  };

  return {
    subscribe(listener) {
      void connect();
      return listeners.subscribe(listener);
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const open = client;
      client = undefined;
      await open?.end().catch(() => {});
    },
  };
}

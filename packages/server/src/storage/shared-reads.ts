/**
 * PostgreSQL: identical selects in flight share the next statement. A read that finds the same
 * statement with the same values already sent waits and goes in the next one, with every other
 * call that asked meanwhile: under load a hot read (a log page, a deliveries page, a device
 * list's stamp) costs one round trip per statement in flight, not one per call, as the API key's
 * statement does (http/authenticate.ts).
 *
 * Why a call still sees everything committed before it arrived: it never takes the answer of a
 * statement sent before it asked, only of the next one, which is sent after the one in flight
 * returns and so after every call waiting for it arrived. The rows are shared by the calls of
 * one statement, so they are frozen, as kept answers are (compiled-query.ts).
 *
 * A value bound to the clock (a page's `since` resolved against the call's time, an online
 * cutoff) differs between calls a millisecond apart. Such a parameter is left out of what makes
 * two calls the same, and the statement runs with the latest value among its calls: each is
 * answered as of a time after it arrived and before its answer, which is what it would have
 * been had it arrived at that moment. Every such parameter grows with the clock.
 *
 * Only outside a transaction (a handle with a pool of its own, pg-statements.ts): a
 * transaction's reads must see its own writes, on its connection.
 */
import { batchedWrites } from '../lib/write-batches.js';
import type { Db } from './database.js';
import { hasPool, runPrepared } from './pg-statements.js';

/** A select as compiled-query.ts hands it over: its statement's name and text. */
export interface SharedStatement {
  name: string;
  sql: string;
}

interface Call {
  statement: SharedStatement;
  values: unknown[];
  clockSlots: readonly number[];
  onSend: () => void;
}

/** More calls than this in one statement wait for the next; a statement's rows serve them all. */
const MAX_CALLS = 1024;

/** A shared statement's rows, and the values it ran with (the latest of the clock-bound ones). */
export interface SharedAnswer<R> {
  rows: readonly R[];
  values: readonly unknown[];
}

const statements = batchedWrites(async (db: Db, _key: string, calls: readonly Call[]) => {
  const [first] = calls;
  const { statement, clockSlots, onSend } = first!;
  const values = first!.values.slice();
  // The calls differ only in their clock-bound values: the latest is the statement's.
  for (const slot of clockSlots) {
    for (const call of calls) values[slot] = Math.max(values[slot] as number, call.values[slot] as number);
  }
  onSend();
  const rows = (await runPrepared(db, statement.name, statement.sql, values)) ?? [];
  for (const row of rows) Object.freeze(row);
  Object.freeze(rows);
  const answer: SharedAnswer<unknown> = { rows, values };
  return calls.map(() => answer);
}, MAX_CALLS);

/**
 * The rows of `statement` at `values`, from the next statement sent for the calls with the same
 * `key` (their values but those at `clockSlots`, where the latest wins); undefined where `db` is
 * not a pool's own handle, for the caller to run the statement itself.
 */
export function sharedRead<R>(
  db: Db,
  statement: SharedStatement,
  key: string,
  values: unknown[],
  clockSlots: readonly number[],
  onSend: () => void,
): Promise<SharedAnswer<R>> | undefined {
  if (!hasPool(db)) return undefined;
  return statements(db, key, { statement, values, clockSlots, onSend }) as Promise<SharedAnswer<R>>;
}

/**
 * A change's records on PostgreSQL, in one statement: the logs of the epochs it moved (which
 * devices each move was about, core/changes.ts) and its audit entries and events, under the
 * network's audit lock. Written separately they are up to five round trips (two logs, the lock,
 * the entries, the events) at the end of a transaction that usually holds the network's row lock,
 * so each is time the network's other writers wait (an enrollment holds it from its epoch move to
 * its commit).
 *
 * The lock is a CTE that both inserts join: neither produces a row, and so neither takes a
 * sequence value, before the lock is held, which keeps sequence order commit order as
 * insertAuditEntries does (audit-entries.ts). The rows travel as one typed array per column, so
 * the text is the same whatever the number of rows. The logs take no lock: the network's row lock
 * of the move they log orders them already.
 */
import { CompiledQuery, type Insertable } from 'kysely';
import type { Db } from '../storage/database.js';
import type { EventsTable } from '../storage/schema-events.js';
import type { AuditRow } from './audit-entries.js';

/** Each column with its PostgreSQL type: the arrays are cast to these. */
const AUDIT_COLUMNS = [
  ['network_id', 'text'],
  ['time', 'bigint'],
  ['key_id', 'text'],
  ['key_name', 'text'],
  ['device_id', 'text'],
  ['user_id', 'text'],
  ['user_login', 'text'],
  ['method', 'text'],
  ['path', 'text'],
  ['status', 'integer'],
  ['client_addr', 'text'],
  ['request_id', 'text'],
  ['action', 'text'],
  ['target', 'text'],
] as const satisfies readonly (readonly [Exclude<keyof AuditRow, 'seq'>, string])[];

const EVENT_COLUMNS = [
  ['id', 'text'],
  ['network_id', 'text'],
  ['type', 'text'],
  ['time', 'bigint'],
  ['actor', 'text'],
  ['data', 'text'],
  ['webhook_id', 'text'],
] as const satisfies readonly (readonly [Exclude<keyof EventsTable, 'seq'>, string])[];

/** `insert into table (columns) select … from unnest($n::type[], …) cross join locked`, parameters from `first`. */
function insertFromArrays(table: string, columns: readonly (readonly [string, string])[], first: number): string {
  const names = columns.map(([name]) => name).join(', ');
  const arrays = columns.map(([, type], i) => `$${first + i}::${type}[]`).join(', ');
  return `insert into ${table} (${names}) select r.* from unnest(${arrays}) as r(${names}) cross join locked`;
}

/**
 * An epoch's log rows: the move to `epoch` was about these devices (core/changes.ts). The log's
 * own module writes the INSERT (Epoch.logInsertText); this file only places it.
 */
export interface LogRows {
  insertText(first: number): string;
  epoch: number;
  deviceIds: readonly string[];
}

const texts = new Map<string, string>();

/** The statement for these logs (their INSERTs from $1 on), with or without entries and events. */
function statementText(logInserts: readonly string[], audit: boolean, events: boolean): string {
  const key = `${logInserts.join(';')}:${audit}:${events}`;
  let text = texts.get(key);
  if (text === undefined) {
    const parts = logInserts.map((insert, i) => `log${i} as (${insert})`);
    let next = 1 + 3 * logInserts.length;
    const locks = audit || events;
    if (locks) {
      parts.push(`locked as (select pg_advisory_xact_lock(hashtextextended($${next}, 0)))`);
      next += 1;
    }
    if (audit) {
      parts.push(`audit as (${insertFromArrays('audit_log', AUDIT_COLUMNS, next)})`);
      next += AUDIT_COLUMNS.length;
    }
    if (events) parts.push(`events as (${insertFromArrays('events', EVENT_COLUMNS, next)})`);
    // With entries or events, the lock is taken even if nothing joined it produced a row.
    text = `with ${parts.join(', ')} select 1${locks ? ' from locked' : ''}`;
    texts.set(key, text);
  }
  return text;
}

/**
 * Writes the logs of `networkId`'s epochs moved, and `audit` and `events` (all of that network)
 * under the lock named `lockName`, in one round trip.
 */
export async function writeChangeRecords(
  trx: Db,
  networkId: string,
  logs: readonly LogRows[],
  lockName: string,
  audit: readonly AuditRow[],
  events: readonly Insertable<EventsTable>[],
): Promise<void> {
  if (logs.length === 0 && audit.length === 0 && events.length === 0) return;
  const params: unknown[] = [];
  for (const log of logs) params.push(networkId, log.epoch, [...new Set(log.deviceIds)]);
  if (audit.length > 0 || events.length > 0) params.push(lockName);
  if (audit.length > 0) {
    for (const [column] of AUDIT_COLUMNS) params.push(audit.map((row) => row[column] ?? null));
  }
  if (events.length > 0) {
    for (const [column] of EVENT_COLUMNS) params.push(events.map((row) => row[column] ?? null));
  }
  const text = statementText(
    logs.map((log, i) => log.insertText(1 + 3 * i)),
    audit.length > 0,
    events.length > 0,
  );
  await trx.executeQuery(CompiledQuery.raw(text, params));
}

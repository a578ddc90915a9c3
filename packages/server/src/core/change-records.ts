/**
 * A change's records on PostgreSQL: its audit entries and events, under the network's audit lock,
 * in one statement. Written separately they are three round trips (the lock, the entries, the
 * events) at the end of a transaction that usually holds the network's row lock, so each is time
 * the network's other writers wait (an enrollment holds it from its epoch move to its commit).
 *
 * The lock is a CTE that both inserts join: neither produces a row, and so neither takes a
 * sequence value, before the lock is held, which keeps sequence order commit order as
 * insertAuditEntries does (audit-entries.ts). The rows travel as one typed array per column, so
 * the text is the same whatever the number of rows.
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

const texts = new Map<string, string>();

function statementText(audit: boolean, events: boolean): string {
  const key = `${audit}:${events}`;
  let text = texts.get(key);
  if (text === undefined) {
    const parts = ['with locked as (select pg_advisory_xact_lock(hashtextextended($1, 0)))'];
    let next = 2;
    if (audit) {
      parts.push(`, audit as (${insertFromArrays('audit_log', AUDIT_COLUMNS, next)})`);
      next += AUDIT_COLUMNS.length;
    }
    if (events) parts.push(`, events as (${insertFromArrays('events', EVENT_COLUMNS, next)})`);
    // The lock is taken even with no row to write (an observation's events were none).
    parts.push(' select 1 from locked');
    text = parts.join('');
    texts.set(key, text);
  }
  return text;
}

/** Writes `audit` and `events` (all of one network) under the lock named `lockName`, in one round trip. */
export async function writeChangeRecords(
  trx: Db,
  lockName: string,
  audit: readonly AuditRow[],
  events: readonly Insertable<EventsTable>[],
): Promise<void> {
  const params: unknown[] = [lockName];
  if (audit.length > 0) {
    for (const [column] of AUDIT_COLUMNS) params.push(audit.map((row) => row[column] ?? null));
  }
  if (events.length > 0) {
    for (const [column] of EVENT_COLUMNS) params.push(events.map((row) => row[column] ?? null));
  }
  await trx.executeQuery(CompiledQuery.raw(statementText(audit.length > 0, events.length > 0), params));
}

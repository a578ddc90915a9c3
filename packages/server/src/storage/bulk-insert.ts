/**
 * Multi-row INSERTs whose SQL is written once per shape. Kysely builds and compiles an
 * insert of n rows × m columns as n × m value nodes on every call (milliseconds for a batch
 * of hundreds), and SQLite then parses a new statement for every distinct row count; here
 * the text for each (dialect, table, row count) is made once and reused, and only the values
 * are bound.
 */
import { CompiledQuery } from 'kysely';
import { type Db, isPostgres } from './database.js';

const texts = new Map<string, string>();

/** `insert into table (columns) values (…), …` for `rows` rows, with `?` or `$n` placeholders. */
export function insertValuesText(table: string, columns: readonly string[], postgres: boolean, rows: number): string {
  const key = `${postgres ? 'pg' : 'sqlite'}:${table}:${columns.join(',')}:${rows}`;
  let text = texts.get(key);
  if (text === undefined) {
    const width = columns.length;
    const tuples: string[] = [];
    for (let r = 0; r < rows; r++) {
      const params = Array.from({ length: width }, (_, c) => (postgres ? `$${r * width + c + 1}` : '?'));
      tuples.push(`(${params.join(',')})`);
    }
    text = `insert into ${table} (${columns.join(',')}) values ${tuples.join(',')}`;
    texts.set(key, text);
  }
  return text;
}

/**
 * Inserts `rows` in order, `chunk` rows per statement (a column a row lacks is NULL). Run it
 * inside the caller's transaction when the rows must be stored all or none.
 */
export async function insertRows<Row extends object>(
  trx: Db,
  table: string,
  columns: readonly (keyof Row & string)[],
  rows: readonly Row[],
  chunk = 200,
): Promise<void> {
  const postgres = isPostgres(trx);
  for (let start = 0; start < rows.length; start += chunk) {
    const part = rows.slice(start, start + chunk);
    const params: unknown[] = [];
    for (const row of part) for (const column of columns) params.push(row[column] ?? null);
    await trx.executeQuery(CompiledQuery.raw(insertValuesText(table, columns, postgres, part.length), params));
  }
}

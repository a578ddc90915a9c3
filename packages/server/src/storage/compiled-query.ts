/**
 * Queries built once. Kysely builds and compiles a query's SQL on every call, which on the
 * request path costs more than SQLite takes to answer it (tens of microseconds per query).
 * A query whose shape never changes, only its values, is built here once with placeholder
 * values and compiled per dialect; a call then only fills in the parameters.
 *
 *     const keyByHash = compiledQuery((db, p: { hash: string }) =>
 *       db.selectFrom('keys').selectAll().where('secret_hash', '=', p.hash));
 *     const row = (await keyByHash(db, { hash }))[0];
 *
 * The builder must use each parameter as a plain value (no IN lists of varying length, no
 * branches on values, no text built from one); a parameter that does not end up as a whole
 * value of the compiled SQL is refused when the query is first built, not mis-bound later.
 */
import { type Compilable, CompiledQuery } from 'kysely';
import type { Db } from './database.js';
import { runPrepared } from './pg-statements.js';
import { runCommitted } from './sqlite-statements.js';

type Params = Record<string, string | number | null>;

interface Template {
  /** Unique among templates: the name of its prepared statement on PostgreSQL (pg-statements.ts). */
  name: string;
  sql: string;
  /** For each parameter position of the SQL, the name of the value that fills it, or a fixed value. */
  slots: ({ name: string } | { value: unknown })[];
}

const PLACEHOLDER = '\u0000warren-param:';

/** Templates made so far, to name each one's prepared statement. */
let templatesMade = 0;

export function compiledQuery<P extends Params, R>(
  build: (db: Db, params: P) => Compilable<R>,
): (db: Db, params: P) => Promise<R[]> {
  // One template per dialect (and so per database handle's adapter), made on first use.
  const templates = new WeakMap<object, Template>();
  return async (db, params) => {
    const adapter = db.getExecutor().adapter;
    let template = templates.get(adapter);
    if (!template) {
      template = compileTemplate(db, build, Object.keys(params));
      templates.set(adapter, template);
    }
    const values = template.slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value));
    // On SQLite a statement that can only see committed rows runs at once (sqlite-statements.ts):
    // Kysely's queue and its promise hops cost more than SQLite takes to answer these queries.
    const rows = runCommitted(db, template.sql, values);
    if (rows) return rows as R[];
    // On PostgreSQL, outside a transaction: a named statement, parsed and planned once per connection.
    const prepared = runPrepared(db, template.name, template.sql, values);
    if (prepared) return (await prepared) as R[];
    const result = await db.executeQuery<R>(CompiledQuery.raw(template.sql, values));
    return result.rows;
  };
}

/**
 * A query whose shape follows a few options (which filters a list call was given): one query
 * built once per shape, on first use, keyed by the text `shape` returns. The builder gets the
 * options themselves, so it may branch on them, but values still go in as parameters.
 *
 *     const keysOf = compiledShapes(
 *       (filter: { type: boolean }) => (filter.type ? 'typed' : 'all'),
 *       (filter) => (db, p: { networkId: string; type?: string }) => …,
 *     );
 *     const rows = await keysOf({ type: true })(db, { networkId, type: 'api' });
 */
export function compiledShapes<O, P extends Params, R>(
  shape: (options: O) => string,
  build: (options: O) => (db: Db, params: P) => Compilable<R>,
): (options: O) => (db: Db, params: P) => Promise<R[]> {
  const queries = new Map<string, (db: Db, params: P) => Promise<R[]>>();
  return (options) => {
    const key = shape(options);
    let query = queries.get(key);
    if (!query) {
      query = compiledQuery(build(options));
      queries.set(key, query);
    }
    return query;
  };
}

function compileTemplate<P extends Params, R>(
  db: Db,
  build: (db: Db, params: P) => Compilable<R>,
  names: string[],
): Template {
  const placeholders = Object.fromEntries(names.map((name) => [name, `${PLACEHOLDER}${name}`])) as P;
  const compiled = build(db, placeholders).compile();
  const slots = compiled.parameters.map((value) => {
    if (typeof value !== 'string' || !value.includes(PLACEHOLDER)) return { value };
    const name = value.slice(PLACEHOLDER.length);
    if (!value.startsWith(PLACEHOLDER) || !names.includes(name)) {
      throw new Error(`compiled query: a value was built from a parameter (${JSON.stringify(value)})`);
    }
    return { name };
  });
  for (const name of names) {
    const uses = slots.filter((slot) => 'name' in slot && slot.name === name).length;
    if (uses === 0) throw new Error(`compiled query: parameter "${name}" is not used as a value`);
  }
  return { name: `warren_${++templatesMade}`, sql: compiled.sql, slots };
}

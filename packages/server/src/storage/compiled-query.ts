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
 *
 * On SQLite a select's answer is kept, per database and values, until the next commit: the
 * statement (with the read transaction SQLite opens and closes around it) is most of what a
 * small read costs, and the commit counter (sqlite-statements.ts) moves with every commit by
 * any connection or process, so a kept answer is never served after its rows changed. The
 * rows are shared by every call that gets them until then, so they are frozen: a caller that
 * wants to change one must copy it. Where there is no such counter (an in-memory database, a
 * transaction's own handle, PostgreSQL but for the stamped reads below) every call runs the
 * statement.
 *
 * A query bound to the clock (the online cutoff, `onlineSince(now)`) gets a new value every
 * millisecond, so its answers would be kept for calls of the same millisecond only. Given a
 * `window`, the answer read with the parameter at `v` is kept for every later value below the
 * bound `until(rows)` returns (the first value at which the answer could differ with nothing
 * committed: the first `last_seen_at` of a device the answer counts as online), still only
 * until the next commit.
 *
 * On PostgreSQL a select that reads only tables that move their network's read stamp (migration
 * 032) says so, `compiledQuery(build, { stampedBy: 'networkId' })`, and a call that brings the
 * stamp its API key's statement read (http/authenticate.ts) is answered from what was kept at
 * that stamp: one round trip per small read, the key's, and correct across instances, since the
 * stamp moves in the writer's own transaction and was read after the call arrived.
 *
 * A caller on SQLite may bring a stamp of its own that moves with every write the select can
 * see (the device list brings the network's route and device counters, migrations 012 and 038,
 * which its index reads once per commit): its answers are then kept per that stamp instead of
 * until the next commit, which every audit batch and heartbeat batch moves.
 *
 * On PostgreSQL a select that is not answered from what was kept shares its statement with
 * the identical calls that asked while the previous one was in flight (shared-reads.ts): one
 * round trip per group of calls in flight instead of one per call, never one sent before a call
 * asked. A parameter bound to the clock (the window's, or `clock`) is left out of what makes two
 * calls identical; the statement runs with the latest value.
 *
 * Each statement a select sends is published on `warren:compiled-query:read` as `{ query }`
 * (its `name`) when something subscribes: how tests see that an answer was kept.
 */
import { channel } from 'node:diagnostics_channel';
import { type Compilable, CompiledQuery, SelectQueryNode } from 'kysely';
import type { Db } from './database.js';
import { hasPool, runPrepared } from './pg-statements.js';
import { type SharedAnswer, sharedRead } from './shared-reads.js';
import { committedVersion, runCommitted } from './sqlite-statements.js';

type Params = Record<string, string | number | null>;

/**
 * A network's read stamp as a call's API key statement read it (PostgreSQL, migration 032):
 * every change committed before the call arrived moved it to at most `seq`. On SQLite, a stamp
 * of the same shape that its caller read after the call arrived (see above).
 */
export interface ReadStamp {
  networkId: string;
  seq: number;
  /** The network's device list stamp (migration 029), read in the same statement. */
  devices?: number;
  /**
   * The network's device record stamp (migration 044), read in the same statement: it moves
   * with what routes show of devices, not with an ordinary heartbeat.
   */
  records?: number;
}

interface Template {
  /** Unique among templates: the name of its prepared statement on PostgreSQL (pg-statements.ts). */
  name: string;
  sql: string;
  /** For each parameter position of the SQL, the name of the value that fills it, or a fixed value. */
  slots: ({ name: string } | { value: unknown })[];
  /** A select: its answer may be kept until the next commit (writes never are). */
  reads: boolean;
  /** What its reads are published as: the query's `name`, or the statement's. */
  label: string;
  /** The positions of the parameters bound to the clock (the window's and `clock`). */
  clockSlots: number[];
}

/** Answers of one compiled select kept on one database, all read at one commit counter value. */
interface KeptAnswers {
  version: number;
  answers: Map<string, Kept>;
}

/** A kept answer; for a query with a window, read at `from` and holding below `until`. */
interface Kept {
  rows: readonly unknown[];
  from: number;
  until: number;
}

/** The clock-bound parameter of a query and the bound below which an answer holds. */
export interface ClockWindow<R> {
  param: string;
  /** The first value of `param` at which `rows`, read at a lower one, may no longer hold. */
  until: (rows: readonly R[]) => number;
}

interface Options<P, R> {
  window?: ClockWindow<R>;
  /**
   * The parameter naming the network of a select that reads only tables moving that network's
   * read stamp: on PostgreSQL its answers are kept per stamp.
   */
  stampedBy?: keyof P & string;
  /**
   * With `stampedBy`: the select also reads devices (their rows or presence), so its answers
   * are kept per read stamp and device list stamp together.
   */
  readsDevices?: boolean;
  /**
   * With `readsDevices`: what the select shows of devices moves the device record stamp
   * (migration 044: records, presence crossings, devices added or removed), not every
   * heartbeat. Its answers are kept per read stamp and record stamp where the call brings the
   * latter, else per device list stamp, which moves with all of that and more.
   */
  readsRecords?: boolean;
  /** What the statements of a select are published as (`warren:compiled-query:read`). */
  name?: string;
  /**
   * A parameter that grows with the clock (a time bound taken from the call's time) but has no
   * window: PostgreSQL calls that differ only in it share a statement (shared-reads.ts). The
   * window's parameter is taken as one too.
   */
  clock?: keyof P & string;
  /** A select written as raw SQL, which Kysely's tree does not show to be one. */
  select?: boolean;
}

/** Distinct values kept per query and database; past it the query's answers start over. */
const KEPT_PER_QUERY = 1024;
/** Networks whose stamped answers one query keeps per database; past it they start over. */
const STAMPED_NETWORKS = 1024;

/** The values of one call as text, each with its type, so that null, '' and 1 and '1' differ. */
function keyOf(values: readonly unknown[]): string {
  let key = '';
  for (const value of values) {
    key += value === null ? '\u0000n' : typeof value === 'number' ? `\u0000#${value}` : `\u0000s${String(value)}`;
  }
  return key;
}

function freeze<R>(rows: R[]): readonly R[] {
  for (const row of rows) Object.freeze(row);
  return Object.freeze(rows);
}

const reads = channel('warren:compiled-query:read');

const PLACEHOLDER = '\u0000warren-param:';

/** Templates made so far, to name each one's prepared statement. */
let templatesMade = 0;

export function compiledQuery<P extends Params, R>(
  build: (db: Db, params: P) => Compilable<R>,
  options: Options<P, R> = {},
): (db: Db, params: P, stamp?: ReadStamp) => Promise<R[]> {
  const { window, stampedBy, readsDevices, readsRecords, name, clock } = options;
  // One template per dialect (and so per database handle's adapter), made on first use.
  const templates = new WeakMap<object, Template>();
  const keptOn = new WeakMap<Db, KeptAnswers>();
  /** PostgreSQL: per database, per network, the answers read at one stamp of it. */
  const stampedOn = new WeakMap<Db, Map<string, KeptAnswers>>();
  /** The same, for the answers kept per record stamp (readsRecords). */
  const recordStampedOn = new WeakMap<Db, Map<string, KeptAnswers>>();
  return async (db, params, stamp) => {
    const adapter = db.getExecutor().adapter;
    let template = templates.get(adapter);
    if (!template) {
      template = compileTemplate(db, build, Object.keys(params), name, [window?.param, clock], options.select);
      templates.set(adapter, template);
    }
    const values = template.slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value));
    let kept: KeptAnswers | undefined;
    if (template.reads && stamp && stampedBy && params[stampedBy] === stamp.networkId) {
      // Both stamps only grow, so their sum moves with either and orders calls as each does.
      const at = readsDevices ? devicesStamp(stamp, readsRecords) : { at: stamp.seq, records: false };
      if (at) kept = stampedAnswers(at.records ? recordStampedOn : stampedOn, db, stamp.networkId, at.at);
    }
    const version = !kept && template.reads ? committedVersion(db) : undefined;
    if (version !== undefined) {
      kept = keptOn.get(db);
      if (kept?.version !== version) {
        kept = { version, answers: new Map() };
        keptOn.set(db, kept);
      }
    }
    if (!kept) {
      const shared = template.reads ? shareRead<R>(db, template, values) : undefined;
      if (shared) return (await shared).rows as R[];
      if (template.reads) published(template);
      return run(db, template, values);
    }
    const at = window ? (params[window.param] as number) : 0;
    const key = window
      ? keyOf(template.slots.map((slot, i) => (isSlotOf(slot, window.param) ? null : values[i])))
      : keyOf(values);
    const answer = kept.answers.get(key);
    if (answer && at >= answer.from && at < answer.until) return answer.rows as R[];
    // Read after the counter (or the call's stamp), so at least as new as its value; if
    // something commits meanwhile the counter moves and no later call looks under the old value
    // (it only grows). An answer read at once (SQLite) is kept before this call yields: callers
    // resumed together (a batch of heartbeats answered by one commit, requests parsed in one
    // turn) would otherwise each miss and read it again while the first awaited its own rows.
    // On PostgreSQL the calls that miss together (after a stamp moved) share one statement; one
    // run with a later clock value than this call's is kept from that value.
    let from = at;
    let rows: readonly R[];
    const now = runCommitted(db, template.sql, values) as R[] | undefined;
    const shared = now ? undefined : shareRead<R>(db, template, values);
    if (shared) {
      const read = await shared;
      rows = read.rows;
      if (window) from = read.values[template.slots.findIndex((slot) => isSlotOf(slot, window.param))] as number;
    } else {
      published(template);
      rows = freeze(now ?? (await run<R>(db, template, values)));
    }
    if (kept.answers.size >= KEPT_PER_QUERY) kept.answers.clear();
    kept.answers.set(key, { rows, from, until: window ? window.until(rows) : Number.POSITIVE_INFINITY });
    return rows as R[];
  };
}

/**
 * A select that reads devices: its version at the call's stamps, and whether it is a record
 * stamp's; undefined where the call did not bring what it is kept by. The record stamp moves
 * with a subset of what moves the list stamp, so a select that shows only records may be kept
 * by either, but never by the two in one place: their sums are not comparable.
 */
function devicesStamp(
  stamp: ReadStamp,
  readsRecords: boolean | undefined,
): { at: number; records: boolean } | undefined {
  if (readsRecords && stamp.records !== undefined) return { at: stamp.seq + stamp.records, records: true };
  return stamp.devices === undefined ? undefined : { at: stamp.seq + stamp.devices, records: false };
}

/**
 * The answers kept at a call's stamp of its network, started afresh when the stamp moved; none
 * for a call whose stamp is older than the kept answers' (its key was read before a change that
 * a later call's key saw): it reads for itself rather than take them back to its stamp.
 */
function stampedAnswers(
  stampedOn: WeakMap<Db, Map<string, KeptAnswers>>,
  db: Db,
  networkId: string,
  version: number,
): KeptAnswers | undefined {
  let networks = stampedOn.get(db);
  if (!networks) {
    networks = new Map();
    stampedOn.set(db, networks);
  }
  let kept = networks.get(networkId);
  if (kept && version < kept.version) return undefined;
  if (kept?.version !== version) {
    if (!kept && networks.size >= STAMPED_NETWORKS) networks.clear();
    kept = { version, answers: new Map() };
    networks.set(networkId, kept);
  }
  return kept;
}

/**
 * PostgreSQL: the call's read in the next statement sent for the same values (shared-reads.ts),
 * those bound to the clock aside; undefined where the call must run it alone.
 */
function shareRead<R>(db: Db, template: Template, values: unknown[]): Promise<SharedAnswer<R>> | undefined {
  // Asked first, so that SQLite's reads and a transaction's, which never share, build no key.
  if (!hasPool(db)) return undefined;
  const { clockSlots } = template;
  const key =
    template.name + keyOf(clockSlots.length ? values.map((v, i) => (clockSlots.includes(i) ? null : v)) : values);
  return sharedRead<R>(db, template, key, values, clockSlots, () => published(template));
}

function published(template: Template): void {
  if (reads.hasSubscribers) reads.publish({ query: template.label });
}

const isSlotOf = (slot: Template['slots'][number], name: string) => 'name' in slot && slot.name === name;

async function run<R>(db: Db, template: Template, values: unknown[]): Promise<R[]> {
  // On SQLite a statement that can only see committed rows runs at once (sqlite-statements.ts):
  // Kysely's queue and its promise hops cost more than SQLite takes to answer these queries.
  const rows = runCommitted(db, template.sql, values);
  if (rows) return rows as R[];
  // On PostgreSQL, outside a transaction: a named statement, parsed and planned once per connection.
  const prepared = runPrepared(db, template.name, template.sql, values);
  if (prepared) return (await prepared) as R[];
  const result = await db.executeQuery<R>(CompiledQuery.raw(template.sql, values));
  return result.rows;
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
  kept: Options<P, R> = {},
): (options: O) => (db: Db, params: P, stamp?: ReadStamp) => Promise<R[]> {
  const queries = new Map<string, (db: Db, params: P, stamp?: ReadStamp) => Promise<R[]>>();
  return (options) => {
    const key = shape(options);
    let query = queries.get(key);
    if (!query) {
      query = compiledQuery(build(options), kept);
      queries.set(key, query);
    }
    return query;
  };
}

function compileTemplate<P extends Params, R>(
  db: Db,
  build: (db: Db, params: P) => Compilable<R>,
  names: string[],
  label: string | undefined,
  clockParams: (string | undefined)[],
  select = false,
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
  const name = `warren_${++templatesMade}`;
  const clockSlots: number[] = [];
  slots.forEach((slot, i) => {
    if ('name' in slot && clockParams.includes(slot.name)) clockSlots.push(i);
  });
  const reads = select || SelectQueryNode.is(compiled.query);
  return { name, sql: compiled.sql, slots, reads, label: label ?? name, clockSlots };
}

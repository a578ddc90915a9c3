/**
 * Test harness: a real server on a random port over a fresh database — a new SQLite file,
 * or (WARREN_TEST_BACKEND=postgres) a new database on WARREN_TEST_POSTGRES_URL's server — with one
 * network and its `all` API key. Tests talk to it over real HTTP.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { type AppOptions, buildApp } from '../src/app.js';
import type { Clock } from '../src/lib/time.js';
import { createNetwork } from '../src/modules/tenants/tenants.service.js';
import { openStorage, type Storage } from '../src/storage/database.js';
import { dropSoon } from './database-drops.js';

export const backend = process.env.WARREN_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite';

/** A clock tests can move forward instead of sleeping. */
export class TestClock implements Clock {
  constructor(public ms = Date.now()) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface TestDatabase {
  storage: Storage;
  url: string;
  schema?: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of the backend under test. */
export async function freshDatabase(): Promise<TestDatabase> {
  if (backend === 'postgres') {
    const server = process.env.WARREN_TEST_POSTGRES_URL;
    if (!server) throw new Error('WARREN_TEST_POSTGRES_URL is not set');
    const template = await migratedTemplate(server);
    const name = `t_${randomBytes(6).toString('hex')}`;
    await onServer(server, (client) => client.query(`create database ${name} template ${template}`));
    const url = databaseUrl(server, name);
    const storage = await openStorage(url, { schema: TEST_SCHEMA, poolSize: 5 });
    return {
      storage,
      url,
      schema: TEST_SCHEMA,
      drop: async () => {
        await storage.close();
        await dropSoon(() => dropDatabase(server, name));
      },
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'warren-test-'));
  const url = `sqlite:${join(dir, 'warren.db')}`;
  const storage = await openStorage(url);
  return {
    storage,
    url,
    drop: async () => {
      await storage.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * PostgreSQL: every test gets a database of its own, copied from a template migrated once per
 * set of migrations. Migrating a fresh schema costs one to four seconds (tables, indexes,
 * functions and triggers of every migration, one statement at a time); copying a migrated
 * database costs about a tenth of that. The schema inside keeps one name, so a test's other
 * instances and raw clients find their tables by `url` and `schema` as before.
 */
const TEST_SCHEMA = 'warren';

let template: Promise<string> | undefined;

/** The name of the migrated template database for the migrations of this checkout. */
function migratedTemplate(server: string): Promise<string> {
  template ??= buildTemplate(server);
  return template;
}

async function buildTemplate(server: string): Promise<string> {
  const migrations = join(dirname(fileURLToPath(import.meta.url)), '../src/storage/migrations');
  const digest = createHash('sha256');
  for (const file of readdirSync(migrations).sort()) digest.update(file).update(readFileSync(join(migrations, file)));
  const name = `warren_template_${digest.digest('hex').slice(0, 16)}`;
  return onServer(server, async (client) => {
    // Test files in other processes ask for the same template at the same time: one builds it.
    await client.query(`select pg_advisory_lock(hashtext('warren test template'))`);
    try {
      const found = await client.query<{ done: boolean }>(
        'select datistemplate as done from pg_database where datname = $1',
        [name],
      );
      if (found.rows[0]?.done) return name;
      // A template left half-made by an interrupted run is made again.
      if (found.rows[0]) await client.query(`drop database ${name} with (force)`);
      await client.query(`create database ${name}`);
      const storage = await openStorage(databaseUrl(server, name), { schema: TEST_SCHEMA, poolSize: 1 });
      await storage.close();
      // Marked complete only once migrated: the mark is what the check above trusts.
      await client.query(`alter database ${name} is_template true`);
      return name;
    } finally {
      await client.query(`select pg_advisory_unlock(hashtext('warren test template'))`);
    }
  });
}

async function dropDatabase(server: string, name: string): Promise<void> {
  await onServer(server, async (client) => {
    try {
      // PostgreSQL waits a few seconds for connections that are closing to go.
      await client.query(`drop database if exists ${name}`);
    } catch (error) {
      // One left open by a test (an instance it did not close): end it rather than keep the copy.
      if ((error as { code?: string }).code !== '55006') throw error;
      await client.query(`drop database if exists ${name} with (force)`);
    }
  });
}

function databaseUrl(server: string, database: string): string {
  const url = new URL(server);
  url.pathname = `/${database}`;
  return url.toString();
}

async function onServer<T>(server: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export interface TestServer {
  url: string;
  apiKey: string;
  networkId: string;
  app: FastifyInstance;
  clock: TestClock;
  database: TestDatabase;
  /** fetch against the server with the network's `all` key unless another is given. */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; key?: string | null; headers?: Record<string, string>; raw?: string },
  ): Promise<Response>;
  /** Another network on the same server (for isolation tests). */
  addNetwork(plan?: 'free' | 'premium'): Promise<{ networkId: string; apiKey: string }>;
  close(): Promise<void>;
}

export async function startServer(
  options: {
    plan?: 'free' | 'premium';
    settings?: AppOptions['settings'];
    relay?: AppOptions['relay'];
    timeouts?: AppOptions['timeouts'];
    /**
     * The server's own address is its public URL (as an operator would configure it) unless
     * settings give another, or this is false (single sign-on and SCIM then refuse to work).
     */
    publicUrl?: false;
  } = {},
): Promise<TestServer> {
  const database = await freshDatabase();
  const clock = new TestClock();
  const created = await createNetwork(database.storage.db, {
    name: 'test',
    ownerEmail: 'owner@example.com',
    plan: options.plan ?? 'premium',
    now: clock.now(),
  });
  const app = await buildApp({
    storage: database.storage,
    clock,
    settings: { apiRateLimit: 100_000, ...options.settings },
    ...(options.relay ? { relay: options.relay } : {}),
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const url = `http://127.0.0.1:${port}`;
  // Known only once listening: set before any request is served.
  if (options.publicUrl !== false && !app.ctx.settings.publicUrl) app.ctx.settings.publicUrl = url;
  const server: TestServer = {
    url,
    apiKey: created.apiKey,
    networkId: created.networkId,
    app,
    clock,
    database,
    call: (method, path, { body, key, headers, raw } = {}) => {
      const all: Record<string, string> = { ...headers };
      const token = key === undefined ? created.apiKey : key;
      if (token !== null) all.authorization = `Bearer ${token}`;
      if (body !== undefined && !all['content-type']) all['content-type'] = 'application/json';
      return fetch(`${url}${path}`, {
        method,
        headers: all,
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      });
    },
    addNetwork: async (plan = 'premium') => {
      const other = await createNetwork(database.storage.db, {
        name: 'other',
        ownerEmail: 'other@example.com',
        plan,
        now: clock.now(),
      });
      return { networkId: other.networkId, apiKey: other.apiKey };
    },
    close: async () => {
      await app.close();
      await database.drop();
    },
  };
  return server;
}

/** A second server process's view: the same database and clock, its own app and connections. */
export interface SecondInstance {
  url: string;
  /** GET with the network's `all` key. */
  get(path: string): Promise<Response>;
  /** Resolves once the audit entries (and due key uses) of its calls so far are written. */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Another instance over `server`'s database, as a second `warren serve` would be: what one
 * writes reaches the other only through the database, so whatever it keeps must follow.
 * `settings` are its own (instances behind one balancer share the public URL).
 */
export async function secondInstance(
  server: TestServer,
  settings: AppOptions['settings'] = {},
): Promise<SecondInstance> {
  const { url, schema } = server.database;
  const storage = await openStorage(url, schema ? { schema, poolSize: 5 } : {});
  const app = await buildApp({ storage, clock: server.clock, settings: { apiRateLimit: 100_000, ...settings } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: base,
    get: (path) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } }),
    settled: () => app.ctx.audit.settled(),
    close: async () => {
      await app.close();
      await storage.close();
    },
  };
}

/** Reads a JSON body, failing loudly with the body text when it is not JSON. */
export async function json<T = any>(response: Response): Promise<T> {
  const text = await response.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`expected JSON, got ${response.status}: ${text.slice(0, 200)}`);
  }
}

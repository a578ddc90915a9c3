/**
 * Test harness: a real server on a random port over a fresh database — a new SQLite file,
 * or (WARREN_TEST_BACKEND=postgres) a new schema in WARREN_TEST_POSTGRES_URL — with one
 * network and its `all` API key. Tests talk to it over real HTTP.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { type AppOptions, buildApp } from '../src/app.js';
import type { Clock } from '../src/lib/time.js';
import { createNetwork } from '../src/modules/tenants/tenants.service.js';
import { openStorage, type Storage } from '../src/storage/database.js';

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
    const url = process.env.WARREN_TEST_POSTGRES_URL;
    if (!url) throw new Error('WARREN_TEST_POSTGRES_URL is not set');
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const storage = await openStorage(url, { schema, poolSize: 5 });
    return {
      storage,
      url,
      schema,
      drop: async () => {
        await storage.close();
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(`drop schema if exists ${schema} cascade`);
        await client.end();
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
  close(): Promise<void>;
}

/**
 * Another instance over `server`'s database, as a second `warren serve` would be: what one
 * writes reaches the other only through the database, so whatever it keeps must follow.
 */
export async function secondInstance(server: TestServer): Promise<SecondInstance> {
  const { url, schema } = server.database;
  const storage = await openStorage(url, schema ? { schema, poolSize: 5 } : {});
  const app = await buildApp({ storage, clock: server.clock, settings: { apiRateLimit: 100_000 } });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    url: base,
    get: (path) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${server.apiKey}` } }),
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

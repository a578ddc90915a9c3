/**
 * Tests run the TypeScript sources: the `@warren/source` condition makes `@warren/*` imports
 * resolve to each package's src/ instead of its build (see each package.json's exports).
 *
 * Two projects: `sqlite` runs every test; `postgres` runs the storage and API suites again
 * against the database in WARREN_TEST_POSTGRES_URL (each test file in its own schema). Each
 * runs two files at a time, except the files in `alone`, which its `-alone` twin runs one at a
 * time once the rest are done (run a backend's whole suite with `--project 'postgres*'`).
 */
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

const postgresUrl = process.env.WARREN_TEST_POSTGRES_URL;
const dbSuites = [
  'packages/server/test/**/*.test.ts',
  'packages/client/test/**/*.test.ts',
  'packages/cli/test/**/*.test.ts',
];

/**
 * Files the postgres project leaves to the sqlite one: they open no database (pure units, the
 * route table, the architecture), hold connections before any query (stalled requests,
 * half-open upgrades), or name a SQLite file whatever the backend (`warren init` and `serve`
 * started as a person would), so a second run would repeat the same work to the same result.
 */
const databaseFree = [
  'packages/server/test/policy/**',
  'packages/server/test/architecture/**',
  'packages/server/test/acl/policy-pool.test.ts',
  'packages/server/test/lib/**',
  'packages/server/test/control/derp/{frames,nacl-box,relay-config,relay-limits,stun}.test.ts',
  'packages/server/test/control/derp/relay-half-open.security.test.ts',
  'packages/server/test/control/tailscale/{early-noise,map-builds,noise,noise-stream}.test.ts',
  'packages/server/test/http/{openapi-drift,request-id,stalled.security}.test.ts',
  'packages/server/test/logs/connections.address.test.ts',
  'packages/server/test/netmap/{netmap.patch,online-set,slot-index}.test.ts',
  'packages/server/test/webhooks/{pacer,webhooks.answers}.test.ts',
  'packages/client/test/client.coverage.test.ts',
  'packages/cli/test/{cli.coverage,package,serve}.test.ts',
];

/**
 * Files that measure time, CPU or memory, or hold thousands of connections: a neighbour's work
 * would skew what they measure, so they run with the machine to themselves.
 */
const alone = [
  'packages/server/test/webhooks/pacer.test.ts',
  'packages/server/test/storage/{wal-checkpointer,compiled-query}.test.ts',
  'packages/server/test/policy/complexity.property.test.ts',
  'packages/server/test/acl/policy-cold-load.test.ts',
  'packages/server/test/acl/policy-pool.test.ts',
  'packages/server/test/http/stalled.security.test.ts',
  // The relay's and ts2021's: the native protocol's re-enrollment file measures nothing.
  'packages/server/test/control/{derp,tailscale}/*.security.test.ts',
  'packages/server/test/control/derp/relay-limits.test.ts',
  'packages/cli/test/{serve,node-agent}.test.ts',
];

/**
 * Alone on PostgreSQL only: the change feed's file cuts every listening connection on the
 * database server, its neighbours' included. On SQLite that test does not run and the file
 * measures nothing, so it runs with the others.
 */
const aloneOnPostgres = ['packages/server/test/control/tailscale/change-feed.test.ts'];

/** Files at a time in the main batch: the I/O-bound suites overlap well on two cores. */
const PARALLEL_FILES = 2;

const conditions = ['@warren/source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      ...backend('sqlite', ['packages/*/test/**/*.test.ts'], []),
      ...(postgresUrl ? backend('postgres', dbSuites, databaseFree) : []),
    ],
  },
});

/** A backend's two projects: its files two at a time, then the `alone` ones one at a time. */
function backend(name: 'sqlite' | 'postgres', include: string[], exclude: string[]) {
  const env = { WARREN_TEST_BACKEND: name };
  const aloneHere = name === 'postgres' ? [...alone, ...aloneOnPostgres] : alone;
  // A test's PostgreSQL database is dropped while the next tests run (test/database-drops.ts).
  const setupFiles = name === 'postgres' ? ['packages/server/test/setup/settle-drops.ts'] : [];
  return [
    {
      extends: true as const,
      test: {
        name,
        include,
        exclude: [...exclude, ...aloneHere],
        env,
        setupFiles,
        maxWorkers: PARALLEL_FILES,
        // A worker's files share one module graph. Loading the server's modules afresh for each
        // file cost about a second of CPU, more than many files' tests take. Its module-level
        // state is keyed by network, device, database or object (one file already runs many
        // servers in one process), so no file sees another's. The `alone` files keep a process
        // each: what they measure must not include another file's leftovers.
        isolate: false,
      },
    },
    {
      extends: true as const,
      test: {
        name: `${name}-alone`,
        include: aloneHere,
        exclude,
        env,
        setupFiles,
        fileParallelism: false,
        sequence: { groupOrder: 1 },
      },
    },
  ];
}

/**
 * Tests run the TypeScript sources: the `@warren/source` condition makes `@warren/*` imports
 * resolve to each package's src/ instead of its build (see each package.json's exports).
 *
 * Two projects: `sqlite` runs every test; `postgres` runs the storage and API suites again
 * against the database in WARREN_TEST_POSTGRES_URL (each test file in its own schema).
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
 * route table, the architecture), or hold connections before any query (stalled requests,
 * half-open upgrades), so a second run would repeat the same work to the same result.
 */
const databaseFree = [
  'packages/server/test/policy/**',
  'packages/server/test/architecture/**',
  'packages/server/test/lib/**',
  'packages/server/test/control/derp/{frames,nacl-box,relay-config,relay-limits,stun}.test.ts',
  'packages/server/test/control/derp/relay-half-open.security.test.ts',
  'packages/server/test/control/tailscale/noise.test.ts',
  'packages/server/test/http/{openapi-drift,request-id,stalled.security}.test.ts',
  'packages/server/test/logs/connections.address.test.ts',
  'packages/server/test/netmap/{netmap.patch,online-set}.test.ts',
  'packages/server/test/webhooks/pacer.test.ts',
  'packages/client/test/client.coverage.test.ts',
  'packages/cli/test/package.test.ts',
];

const conditions = ['@warren/source', ...defaultServerConditions];

export default defineConfig({
  resolve: { conditions },
  ssr: { resolve: { conditions } },
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: { name: 'sqlite', include: ['packages/*/test/**/*.test.ts'], env: { WARREN_TEST_BACKEND: 'sqlite' } },
      },
      ...(postgresUrl
        ? [
            {
              extends: true as const,
              test: {
                name: 'postgres',
                include: dbSuites,
                exclude: databaseFree,
                env: { WARREN_TEST_BACKEND: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});

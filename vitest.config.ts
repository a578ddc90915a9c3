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
                exclude: ['packages/server/test/policy/**'],
                env: { WARREN_TEST_BACKEND: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});

/**
 * Two projects: `sqlite` runs every test; `postgres` runs the storage and API suites again
 * against the database in WARREN_TEST_POSTGRES_URL (each test file in its own schema).
 */
import { defineConfig } from 'vitest/config';

const postgresUrl = process.env.WARREN_TEST_POSTGRES_URL;
const dbSuites = [
  'packages/server/test/**/*.test.ts',
  'packages/client/test/**/*.test.ts',
  'packages/cli/test/**/*.test.ts',
];

export default defineConfig({
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

/**
 * The console's browser suite (`npm run test:console`, .ci/console.sh): Chromium driven by
 * playwright-core against a real `warren serve`. Kept out of `npm test`, which needs no browser.
 */
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    root: import.meta.dirname,
    include: ['browser/**/*.browser.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});

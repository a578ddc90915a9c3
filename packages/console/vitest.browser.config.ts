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
    // Each file starts its own server and browser on ports and directories of its own, and
    // spends most of its time waiting on the page: two files at a time take about two thirds
    // of the serial time, and more than two contend for a small CI machine's cores.
    fileParallelism: true,
    maxWorkers: 2,
  },
});

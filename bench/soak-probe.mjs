// Preloaded into `warren serve` by the soak benchmark (`node --import`): appends the process's
// memory, as JSON lines, to the file in WARREN_SOAK_PROBE every second, so the benchmark can read
// heap figures that only the process itself can see. Preloads run in worker threads too (the
// server's WAL checkpointer is one); only the main thread reports, its heap being the server's.
import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.WARREN_SOAK_PROBE;
if (file && isMainThread) {
  setInterval(() => {
    const { rss, heapUsed, heapTotal } = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ at: Date.now(), rss, heapUsed, heapTotal })}\n`);
  }, 1000).unref();
}

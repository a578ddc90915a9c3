// Preloaded into `warren serve` by the soak benchmark (`node --import`): appends the process's
// memory, as JSON lines, to the file in WARREN_SOAK_PROBE every second, so the benchmark can read
// heap figures that only the process itself can see.
import { appendFileSync } from 'node:fs';

const file = process.env.WARREN_SOAK_PROBE;
if (file) {
  setInterval(() => {
    const { rss, heapUsed, heapTotal } = process.memoryUsage();
    appendFileSync(file, `${JSON.stringify({ at: Date.now(), rss, heapUsed, heapTotal })}\n`);
  }, 1000).unref();
}

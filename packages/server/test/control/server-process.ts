/**
 * A test server in a process of its own, so that what hostile connections make it hold is
 * measured apart from the test's own clients. It prints `{ url, apiKey }` as a JSON line, then
 * answers each `memory` line on stdin with its memory after a full garbage collection, and on
 * Linux its peak resident size since the previous answer (the peak is reset after each answer);
 * `exit` closes it.
 *
 * Run as: node --expose-gc --import tsx --conditions=@warren/source server-process.ts [settings]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { startServer } from '../harness.js';

const settings = JSON.parse(process.argv[2] ?? '{}');
const server = await startServer({ settings });
const say = (message: unknown) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** Peak resident set size (VmHWM) in bytes, where /proc tells it. */
function peakRss(): number | undefined {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Starts VmHWM again from the current resident size (Linux's clear_refs, value 5). */
function resetPeakRss(): void {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
  } catch {
    // Not Linux, or not allowed: the peak then counts from the start.
  }
}

say({ url: server.url, apiKey: server.apiKey });
for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'memory') {
    (globalThis as { gc?: () => void }).gc?.();
    const { heapUsed, external, arrayBuffers, rss } = process.memoryUsage();
    say({ heapUsed, external, arrayBuffers, rss, peakRss: peakRss() });
    resetPeakRss();
  } else if (line === 'exit') break;
}
await server.close();
process.exit(0);

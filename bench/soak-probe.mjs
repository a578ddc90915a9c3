// Preloaded into `warren serve` by the soak benchmark (`node --import`): appends the process's
// memory, as JSON lines, to the file in WARREN_SOAK_PROBE every second, so the benchmark can read
// heap figures that only the process itself can see. Preloads run in worker threads too (the
// server's WAL checkpointer is one); only the main thread reports, its heap being the server's.
//
// `heapUsed` is the heap at that second: live objects plus garbage not yet collected, which
// swings by a hundred megabytes between full collections under load. `liveHeap` is the heap
// just after the last full (mark-compact) collection, what the process actually holds on to:
// the figure that grows when something leaks.
//
// On SIGUSR2 (node runs with --expose-gc) it collects the whole heap at once and writes a sample
// marked `collected`: RSS and heap right after a full collection, what the process holds and
// nothing it has yet to collect. The benchmark asks for one at the end of the warm-up and one
// at the end, and judges growth on those two. With WARREN_SOAK_SNAPSHOTS (a directory), each
// such sample is followed by a heap snapshot there (tailscale-memory reads what a device holds
// from two of them).
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString, writeHeapSnapshot } from 'node:v8';
import { isMainThread } from 'node:worker_threads';

const file = process.env.WARREN_SOAK_PROBE;
if (file && isMainThread) {
  let liveHeap;
  let fullCollections = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.detail?.kind !== constants.NODE_PERFORMANCE_GC_MAJOR) continue;
      liveHeap = getHeapStatistics().used_heap_size;
      fullCollections++;
    }
  }).observe({ entryTypes: ['gc'] });
  // Linux splits the resident memory into anonymous pages (heaps: V8's, the C allocator's) and
  // file pages (the binary, libraries, mapped files): only the first grows with what is held.
  const status = existsSync('/proc/self/status') ? '/proc/self/status' : undefined;
  const resident = () => {
    if (!status) return {};
    const text = readFileSync(status, 'utf8');
    const kB = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(text)?.[1] ?? 0) * 1024;
    return { rssAnon: kB('RssAnon'), rssFile: kB('RssFile') };
  };
  /** The process's memory now; per V8 space, the bytes it holds and those in use (the heap's slack). */
  const measure = () => ({
    ...process.memoryUsage(),
    ...resident(),
    spaces: Object.fromEntries(
      getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
    ),
  });
  const write = (collected, usage = measure(), extra = {}) => {
    const { rss, heapUsed, heapTotal, external, arrayBuffers, rssAnon, rssFile, spaces } = usage;
    const sample = {
      at: Date.now(),
      rss,
      heapUsed,
      heapTotal,
      external,
      arrayBuffers,
      rssAnon,
      rssFile,
      liveHeap,
      fullCollections,
      collected,
      spaces,
      ...extra,
    };
    appendFileSync(file, `${JSON.stringify(sample)}\n`);
  };
  // The open streams' builds so far (the server publishes each, control/tailscale/map-stream.ts):
  // the filter alone, the whole map, and the whole map where the filter alone was asked for,
  // in every sample, and each change read in which the policy moved, with the heads it was read
  // between (modules/netmap/change-feed.ts): the tailscale benchmark counts each policy
  // change's builds from them.
  const builds = { filterOnly: 0, whole: 0, declined: 0 };
  subscribe('warren:tailscale:map-build', ({ filterOnly, asked }) => {
    if (filterOnly) builds.filterOnly++;
    else if (asked) builds.declined++;
    else builds.whole++;
  });
  subscribe('warren:change-feed:read', ({ previous, head, policyOnly, devices }) => {
    if (previous && previous.policyVersion === head.policyVersion) return;
    const feed = { previous, head, policyOnly: policyOnly === true, devices };
    appendFileSync(file, `${JSON.stringify({ at: Date.now(), feed, builds })}\n`);
  });
  setInterval(() => write(false, measure(), { builds }), 1000).unref();
  const snapshots = process.env.WARREN_SOAK_SNAPSHOTS;
  // With WARREN_SOAK_COMPACT, each collected sample also says what the process holds after a
  // collection that compacts every old-space page: V8's own full collections move objects off
  // only the pages its heuristics pick, so after a burst of garbage (an enrollment) pages with a
  // few live objects each stay held. The difference is V8's slack, not what is kept alive.
  const compact = process.env.WARREN_SOAK_COMPACT === '1';
  const compacted = () => {
    setFlagsFromString('--compact-on-every-full-gc');
    globalThis.gc?.();
    setFlagsFromString('--no-compact-on-every-full-gc');
    const { rss, heapUsed, heapTotal, rssAnon } = measure();
    return { rss, heapUsed, heapTotal, rssAnon };
  };
  process.on('SIGUSR2', () => {
    globalThis.gc?.();
    // The plain collection's figures, then (with WARREN_SOAK_COMPACT) the compacted ones.
    const usage = measure();
    write(true, usage, compact ? { afterCompaction: compacted() } : {});
    // After the sample, so the snapshot's own memory is not in it.
    if (snapshots) writeHeapSnapshot(join(snapshots, `warren-${process.pid}-${Date.now()}.heapsnapshot`));
  });
}

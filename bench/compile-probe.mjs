// Preloaded into `warren serve` (`node --import`) beside V8's code traces, so that what the
// optimising compiler did can be cut to a policy change's window (bench/compile-summary.ts):
//
//   cd /tmp/traces && WARREN_BENCH_NODE_ARGS="--trace-opt --trace-deopt --trace-osr \
//     --trace-file-names --redirect-code-traces --import $REPO/bench/compile-probe.mjs" \
//     npx tsx --conditions=@warren/source $REPO/bench/index.ts tailscale --count 2500 ...
//
// With `--redirect-code-traces` V8 writes each isolate's traces to `code-<pid>-<isolate>.asm`
// in the working directory (hence running the benchmark from another one), opening the file
// for appending around each trace and closing it, so a line this probe appends to the same file
// lands between the traces written before and after it. (`--redirect-code-traces-to` would put
// every isolate in one file, but each isolate empties the file when it first traces: the
// policy workers do, mid-run.) An isolate's id is its thread's id (the main thread's is 0), and
// the file is emptied when the isolate first traces, so the probe first runs a loop until V8
// has traced it, and marks nothing if the file does not appear. It appends:
//   MARK request <method> <path> <ms>   on the main thread, as each HTTP request arrives (a
//                                       change's PUT), with Date.now();
//   MARK builds <n> idle                on the main thread, when the map streams have built
//                                       nothing for 500 ms after building n since the mark before;
//   MARK message <ms>                   in a worker thread, as it receives a message (a policy
//                                       worker's document to validate), with Date.now().
import { subscribe } from 'node:diagnostics_channel';
import { appendFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread, parentPort, threadId } from 'node:worker_threads';

const file = join(process.cwd(), `code-${process.pid}-${threadId}.asm`);

/** A loop V8 soon compiles (and traces), so that this isolate's trace file exists. */
function spin(n) {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += i % 7;
  return sum;
}

if (process.execArgv.includes('--redirect-code-traces')) {
  for (let round = 0; round < 200 && !existsSync(file); round++) spin(100_000);
  if (existsSync(file)) {
    const mark = (text) => appendFileSync(file, `MARK ${text}\n`);
    if (isMainThread) {
      subscribe('http.server.request.start', ({ request }) =>
        mark(`request ${request.method} ${request.url} ${Date.now()}`),
      );
      let builds = 0;
      let idle;
      subscribe('warren:tailscale:map-build', () => {
        builds++;
        clearTimeout(idle);
        idle = setTimeout(() => {
          mark(`builds ${builds} idle`);
          builds = 0;
        }, 500).unref();
      });
    } else {
      parentPort?.on('message', () => mark(`message ${Date.now()}`));
    }
  }
}

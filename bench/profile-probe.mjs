// Preloaded into `warren serve` (`node --import`) by a benchmark run with `--profile DIR`: a CPU
// profile of exactly the window the benchmark loads one call, not of the start, the fleet's
// enrollment or the warm-up. Each SIGUSR2 toggles: the first starts V8's sampling profiler, the
// next stops it and writes `<n>.cpuprofile` into WARREN_PROFILE_DIR, beside `<n>.json` with the
// process's CPU time over the same window (user and system, µs), which the benchmark divides by
// the requests wrk counted. Only the main thread profiles (worker threads run preloads too).
//
// Sampled every 200 µs (V8's default is 1 ms): a small call takes tens of µs, and at 1 ms a
// short window leaves most functions with a handful of samples. Sampling costs the server some
// CPU of its own, so compare CPU per request between runs profiled alike.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';

const dir = process.env.WARREN_PROFILE_DIR;
if (dir && isMainThread) {
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))),
    );
  let started;
  let written = 0;
  let busy = Promise.resolve();
  const toggle = async () => {
    if (!started) {
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 200 });
      await post('Profiler.start');
      started = process.cpuUsage();
      return;
    }
    const cpu = process.cpuUsage(started);
    started = undefined;
    const { profile } = await post('Profiler.stop');
    const n = ++written;
    writeFileSync(join(dir, `${n}.cpuprofile`), JSON.stringify(profile));
    writeFileSync(join(dir, `${n}.json`), JSON.stringify({ userUs: cpu.user, systemUs: cpu.system }));
  };
  process.on('SIGUSR2', () => {
    busy = busy.then(toggle).catch((error) => process.stderr.write(`profile probe: ${error}\n`));
  });
}

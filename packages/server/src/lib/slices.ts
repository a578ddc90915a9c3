/**
 * Long computations on the request thread, spread over turns of the event loop. The work is a
 * generator that pauses (yields) often; it runs until `sliceMs` have passed, then lets queued
 * I/O and timers run before it goes on, so no request waits on it for more than about a slice.
 */
export async function runInSlices<T>(steps: Generator<void, T>, sliceMs = 8): Promise<T> {
  let sliceEnd = performance.now() + sliceMs;
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
    if (performance.now() >= sliceEnd) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      sliceEnd = performance.now() + sliceMs;
    }
  }
}

// A thread's CPU time as another thread reads it (lib/thread-cpu.ts), with the real /proc.
import { describe, expect, it } from 'vitest';
import { ownThread, threadCpuMs } from '../../src/lib/thread-cpu.js';

describe.runIf(process.platform === 'linux')('the CPU time of a thread', () => {
  it('names the calling thread and reads what it used, which grows only as it works', () => {
    const thread = ownThread();
    // The main thread's id is the process id.
    expect(thread).toBe(`/proc/${process.pid}/task/${process.pid}`);
    const before = threadCpuMs(thread as string) as number;
    expect(before).toBeGreaterThan(0);
    const end = performance.now() + 50;
    while (performance.now() < end);
    const after = threadCpuMs(thread as string) as number;
    // On a CPU for part of those 50 ms at least (the machine may be busy), never for much more:
    // the kernel brings a running thread's count up to date at each clock tick (10 ms at most).
    expect(after).toBeGreaterThan(before);
    expect(after - before).toBeLessThanOrEqual(50 + 20);
  });

  it('reads nothing for a thread that is not there', () => {
    expect(threadCpuMs('/proc/self/task/0')).toBeUndefined();
  });
});

describe.skipIf(process.platform === 'linux')('elsewhere', () => {
  it('names no thread, so callers count wall time', () => {
    expect(ownThread()).toBeUndefined();
  });
});

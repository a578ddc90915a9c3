/**
 * The processor time one thread of this process has used, read by another thread. Node has no
 * per-thread CPU clock (process.cpuUsage() sums every thread), so on Linux a thread names its
 * own directory under /proc, and any thread of the process can then read that thread's
 * `schedstat`, whose first field is the time it has spent on a CPU, in nanoseconds. Reading
 * `stat` instead would need the kernel's clock tick, which Node cannot ask for, and counts in
 * steps of 10 ms.
 *
 * Elsewhere (other systems, or a /proc that is not mounted or lacks the file), there is no
 * thread to name and callers count wall time instead.
 */
import { readFileSync, readlinkSync } from 'node:fs';

/**
 * The calling thread's /proc directory (`/proc/<pid>/task/<tid>`), or undefined when its CPU
 * time cannot be read there. Must run on the thread itself: /proc/thread-self is whoever reads it.
 */
export function ownThread(): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const thread = `/proc/${readlinkSync('/proc/thread-self')}`;
    return threadCpuMs(thread) === undefined ? undefined : thread;
  } catch {
    return undefined;
  }
}

/** The CPU time `thread` (from ownThread) has used so far (ms), or undefined once it cannot be read. */
export function threadCpuMs(thread: string): number | undefined {
  try {
    const onCpuNs = Number.parseInt(readFileSync(`${thread}/schedstat`, 'latin1'), 10);
    return Number.isFinite(onCpuNs) ? onCpuNs / 1e6 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The policy engine in a worker thread (see policy-pool.ts): validation, compilation and the
 * policy's own tests run here, so a large or hostile document never holds the event loop that
 * serves every other request.
 */
import { constants, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { ownThread } from '../../lib/thread-cpu.js';
import { validatePolicy } from '../../policy/index.js';
import { preparePolicyTransfer } from './policy-transfer.js';

// On Linux a thread has its own nice value (setpriority on "the calling process" sets the
// calling thread's): validating a policy yields the CPU to the thread that answers requests.
// Elsewhere this would lower the whole process, so it is done on Linux only.
if (process.platform === 'linux') {
  try {
    setPriority(constants.priority.PRIORITY_BELOW_NORMAL);
  } catch {
    // Not permitted (a sandbox): validation runs at the normal priority.
  }
}

const port = parentPort;
if (port) {
  port.on(
    'message',
    ({ id, text, prepare, asTailscale }: { id: number; text: string; prepare?: boolean; asTailscale?: boolean }) => {
      // The compiled policy holds getters and class instances that cannot cross threads: the
      // verdict, the problems and the tests' results are what callers need from here. A caller
      // about to store the policy (`prepare`) also gets what it read, in pieces its own thread
      // indexes a slice at a time (policy-transfer.ts).
      const result = validatePolicy(text, { asTailscale });
      const prepared = prepare && result.ok ? preparePolicyTransfer(text, result.parsed, result.policy) : undefined;
      port.postMessage({ id, valid: result.ok, errors: result.errors, tests: result.tests, prepared });
    },
  );
  // The pool counts a validation's budget in this thread's CPU time, read under this name.
  port.postMessage({ ready: true, thread: ownThread() });
}

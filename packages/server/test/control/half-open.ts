/**
 * Half-open connections held by a process of their own, as an attacker elsewhere would hold
 * them: ten thousand of them in the test's process, beside the server's own ends, would count
 * twice against one process's descriptor limit, and the server's would not be what is tested.
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Opens every batch's sockets at once, writes each its bytes, and reports as JSON lines. */
const ATTACKER = `
const net = require('node:net');
const port = Number(process.argv[1]);
const batches = JSON.parse(process.argv[2]);
const say = (message) => process.stdout.write(JSON.stringify(message) + '\\n');
let total = 0;
for (const batch of batches) for (const [, count] of batch) total += count;
let closed = 0;
let slowest = 0;
function open(bytes) {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const started = Date.now();
    // Whatever the server answers is read and dropped: unread, its close would never be seen.
    socket.resume();
    socket.on('close', () => {
      slowest = Math.max(slowest, Date.now() - started);
      // The last close: reported, and with nothing left open the process ends by itself.
      if (++closed === total) say({ closed, slowest });
    });
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.on('error', () => {});
      socket.write(bytes, () => resolve());
    });
  });
}
(async () => {
  for (const batch of batches) {
    await Promise.all(batch.flatMap(([bytes, count]) => Array.from({ length: count }, () => open(bytes))));
  }
  say({ opened: total });
})().catch((error) => {
  say({ error: String(error) });
  process.exit(1);
});
`;

export interface HalfOpen {
  /** How many connections are open and have sent their bytes. */
  opened: Promise<number>;
  /** When the server has closed them all: how many, and the longest one stayed open (ms). */
  closed: Promise<{ closed: number; slowest: number }>;
  stop(): void;
}

/** `batches`: each a list of [bytes, how many connections send them], opened together. */
export function holdHalfOpen(port: number, batches: Array<Array<[string, number]>>): HalfOpen {
  const child = spawn(process.execPath, ['-e', ATTACKER, String(port), JSON.stringify(batches)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  let onOpened: (n: number) => void = () => {};
  let onClosed: (r: { closed: number; slowest: number }) => void = () => {};
  let onError: (e: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    onError = reject;
  });
  failed.catch(() => {});
  const opened = Promise.race([new Promise<number>((resolve) => (onOpened = resolve)), failed]);
  const closed = Promise.race([
    new Promise<{ closed: number; slowest: number }>((resolve) => (onClosed = resolve)),
    failed,
  ]);
  lines.on('line', (line) => {
    const message = JSON.parse(line) as { opened?: number; closed?: number; slowest?: number; error?: string };
    if (message.error) onError(new Error(`the attacking process failed: ${message.error}`));
    else if (message.opened !== undefined) onOpened(message.opened);
    else if (message.closed !== undefined) onClosed({ closed: message.closed, slowest: message.slowest ?? 0 });
  });
  // After its last line was read: an exit before the report is a failure, not a hang.
  lines.on('close', () => onError(new Error('the attacking process ended before every connection was closed')));
  return { opened, closed, stop: () => child.kill() };
}

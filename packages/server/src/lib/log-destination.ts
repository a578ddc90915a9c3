/**
 * Where `warren serve` writes its log: a file descriptor, written asynchronously by pino's
 * destination (SonicBoom), which is handed lines as bytes. Handed text, SonicBoom measures
 * the UTF-8 length of the text it already holds on every write (`Buffer.byteLength` of the
 * pending text, up to 16 kB while a write is in flight, flattened from the strings it was
 * appended from): with a line per request that was 1.5–2 µs of every call's CPU under load
 * (docs/decisions/request-path.md, "The request log line and the audit row"). In its buffer
 * mode it keeps a count per chunk instead.
 *
 * The lines of one turn of the event loop (every request answered in it) are handed over
 * together, as one Buffer, at the end of the turn: a Buffer made per line cost its allocation
 * and SonicBoom's bookkeeping once per request (about 1.4 µs of a small answer's CPU), where
 * a turn under load answers tens of requests. A line waits for the end of its turn, never for
 * more traffic.
 */
import { writeSync } from 'node:fs';
import pino from 'pino';

export interface LogDestination extends pino.DestinationStream {
  /** Writes whatever is pending before returning (on shutdown). */
  flushSync(): void;
}

export function logDestination(fd: number): LogDestination {
  const stream = pino.destination({ fd, sync: false, contentMode: 'buffer' });
  let pending: string[] = [];
  const take = (): Buffer => {
    const lines = pending;
    pending = [];
    return Buffer.from(lines.length === 1 ? lines[0]! : lines.join(''));
  };
  const handOver = (): void => {
    // The buffer mode takes Buffers, whatever SonicBoom's types say of write().
    if (pending.length > 0) stream.write(take() as unknown as string);
  };
  const flushSync = (): void => {
    // What SonicBoom holds first, then this turn's lines, written here: handed to SonicBoom they
    // would start an asynchronous write that its flushSync does not wait for, and a process
    // that exits or closes the descriptor right after would lose them.
    stream.flushSync();
    if (pending.length > 0) writeSync(fd, take());
  };
  // pino flushes its destination when the process exits; the lines of the last turn are here.
  process.once('exit', () => {
    if (pending.length > 0) flushSync();
  });
  return {
    write: (line: string) => {
      if (pending.push(line) === 1) setImmediate(handOver);
    },
    flushSync,
  };
}

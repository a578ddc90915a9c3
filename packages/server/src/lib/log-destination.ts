/**
 * Where `warren serve` writes its log: a file descriptor, written asynchronously by pino's
 * destination (SonicBoom), which is handed each line as bytes. Handed text, SonicBoom measures
 * the UTF-8 length of the text it already holds on every write (`Buffer.byteLength` of the
 * pending text, up to 16 kB while a write is in flight, flattened from the strings it was
 * appended from): with a line per request that was 1.5–2 µs of every call's CPU under load
 * (docs/decisions/request-path.md, "The request log line and the audit row"). In its buffer
 * mode it keeps a count per chunk instead, and a line's bytes are made once, here.
 */
import pino from 'pino';

export interface LogDestination extends pino.DestinationStream {
  /** Writes whatever is pending before returning (on shutdown). */
  flushSync(): void;
}

export function logDestination(fd: number): LogDestination {
  const stream = pino.destination({ fd, sync: false, contentMode: 'buffer' });
  return {
    // The buffer mode takes Buffers, whatever SonicBoom's types say of write().
    write: (line: string) => stream.write(Buffer.from(line) as unknown as string),
    flushSync: () => stream.flushSync(),
  };
}

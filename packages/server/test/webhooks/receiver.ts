/**
 * A real webhook receiver on loopback. Each path answers as a test scripts it (`answers`:
 * statuses, or statuses with headers and a delay, in order, then 200), and every request is
 * kept with its headers and raw body.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A scripted answer: its status, headers (Retry-After, Location) and how long it takes. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  delayMs?: number;
}

export class Receiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, (number | Answer)[]>();
  private server: Server | undefined;
  url = '';

  /** `path` answers these to its next requests, then 200. */
  script(path: string, answers: (number | Answer)[]): void {
    this.answers.set(path, [...answers]);
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        const next = this.answers.get(path)?.shift() ?? 200;
        const { status, headers, delayMs } = typeof next === 'number' ? { status: next } : next;
        this.received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        const answer = () => response.writeHead(status, headers).end();
        if (delayMs) setTimeout(answer, delayMs);
        else answer();
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async close(): Promise<void> {
    // Answers still being delayed end with the receiver, as they would with a dead endpoint.
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** Polls `check` until it returns true (every 25 ms, up to `ms`). */
export async function waitFor(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

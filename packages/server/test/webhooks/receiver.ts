/**
 * A real webhook receiver on loopback. Each path answers as a test scripts it (`answers`:
 * statuses in order, then 200), and every request is kept with its headers and raw body.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

export class Receiver {
  readonly received: Received[] = [];
  private readonly answers = new Map<string, number[]>();
  private server: Server | undefined;
  url = '';

  /** `path` answers these statuses to its next requests, then 200. */
  script(path: string, statuses: number[]): void {
    this.answers.set(path, [...statuses]);
  }

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const path = request.url ?? '/';
        const status = this.answers.get(path)?.shift() ?? 200;
        this.received.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), status });
        response.writeHead(status).end();
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

/**
 * Deliveries yield to requests: the pacer against a real HTTP server on loopback, with the
 * event loop saturated by synchronous work as a burst of API calls saturates it.
 */
import http from 'node:http';
import { setImmediate as yieldLoop } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pacer } from '../../src/modules/webhooks/pacer.js';

const options = { windowMs: 50, saturated: 0.5, busyRate: 100 };

/** Asks for turns for `ms`, yielding to the loop between them; returns how many were granted. */
async function turnsIn(pacer: Pacer, ms: number): Promise<number> {
  let granted = 0;
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const wait = pacer.turn();
    if (wait) await Promise.race([wait, new Promise((resolve) => setTimeout(resolve, end - Date.now()))]);
    else await yieldLoop();
    if (Date.now() < end) granted++;
  }
  return granted;
}

/** Keeps the loop 80 % busy (8 ms of work every 10 ms), sending a request each time when asked. */
function saturate(url: string | null): () => void {
  const timer = setInterval(() => {
    const until = performance.now() + 8;
    while (performance.now() < until) {}
    if (url) http.get(url, (response) => response.resume()).on('error', () => undefined);
  }, 10);
  return () => clearInterval(timer);
}

describe('webhook pacer', () => {
  let server: http.Server;
  let url = '';
  beforeAll(async () => {
    server = http.createServer((_request, response) => response.end());
    server.keepAliveTimeout = 1;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('lets attempts go at full speed while the loop has room, and at the busy rate while requests saturate it', async () => {
    const pacer = new Pacer(server, options);
    pacer.start();
    try {
      expect(await turnsIn(pacer, 300)).toBeGreaterThan(1_000);

      const stop = saturate(url);
      await new Promise((resolve) => setTimeout(resolve, 2 * options.windowMs));
      const busy = await turnsIn(pacer, 500);
      stop();
      // 100 a second for 0.5 s: about 50, and never none.
      expect(busy).toBeGreaterThan(10);
      expect(busy).toBeLessThan(90);

      await new Promise((resolve) => setTimeout(resolve, 2 * options.windowMs));
      expect(await turnsIn(pacer, 300)).toBeGreaterThan(1_000);
    } finally {
      pacer.stop();
    }
  });

  it('does not hold attempts back when the loop is busy but no request is waiting', async () => {
    const pacer = new Pacer(server, options);
    pacer.start();
    const stop = saturate(null);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2 * options.windowMs));
      expect(await turnsIn(pacer, 500)).toBeGreaterThan(200);
    } finally {
      stop();
      pacer.stop();
    }
  });

  it('releases a waiting turn when it stops', async () => {
    const pacer = new Pacer(server, options);
    pacer.start();
    const stop = saturate(url);
    try {
      await new Promise((resolve) => setTimeout(resolve, 2 * options.windowMs));
      let wait: Promise<void> | undefined;
      for (let i = 0; i < 1_000 && !wait; i++) wait = pacer.turn();
      expect(wait).toBeDefined();
      pacer.stop();
      await wait;
    } finally {
      stop();
    }
  });
});

/**
 * What keeps a large simulated fleet cheap and stoppable: the netmap is fetched only when the
 * heartbeat's version changes, an agent keeps at most `maxPeers` peers, a fleet has a bounded
 * number of netmap fetches in flight, requests time out, stop() does not wait on a server that
 * never answers, and a shared signal does not collect abort listeners.
 */
import { spawn } from 'node:child_process';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NodeClient, Warren } from '@warren/client';
import { startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, randomNodeKey } from '../src/node/agent.js';
import { gatedFetch } from '../src/node/concurrency.js';
import { simulate } from '../src/node/fleet-simulator.js';
import { WARREN_FROM_SOURCES } from './bin.js';

const until = async (check: () => boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

/** A fetch that records every request's method, path and If-None-Match before passing it on. */
function recording(next: typeof fetch = fetch) {
  const calls: { method: string; path: string; ifNoneMatch: string | null }[] = [];
  const wrapped: typeof fetch = (input, init) => {
    calls.push({
      method: init?.method ?? 'GET',
      path: new URL(String(input)).pathname,
      ifNoneMatch: new Headers(init?.headers).get('if-none-match'),
    });
    return next(input, init);
  };
  const count = (method: string, path: string) => calls.filter((c) => c.method === method && c.path === path).length;
  return { fetch: wrapped, calls, count };
}

/**
 * A server that accepts connections and never answers, except (when asked) enrollment, which
 * it answers with a made-up device so that agents get as far as heartbeating.
 */
async function silentServer(options: { register?: boolean } = {}) {
  const seen: string[] = [];
  let enrolled = 0;
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    seen.push(`${request.method} ${request.url}`);
    request.resume();
    if (options.register && request.url === '/v1/node/register') {
      const n = ++enrolled;
      const device = { id: `dev_fake${n}`, name: `fake-${n}`, addresses: [`100.64.0.${n}`] };
      response.writeHead(201, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ device, nodeToken: `wrn_node_fake${n}` }));
    }
    // anything else: never answered
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    count: (call: string) => seen.filter((s) => s === call).length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('device agent at scale', () => {
  let server: TestServer;
  let admin: Warren;
  let authKey: string;
  beforeAll(async () => {
    server = await startServer();
    admin = new Warren({ url: server.url, apiKey: server.apiKey });
    // Untagged, so its devices belong to the owner, whom the default policy lets reach
    // everything: every device sees every other, and netmaps grow with the network.
    authKey = (await admin.keys.create({ type: 'auth', reusable: true })).key;
  });
  afterAll(async () => {
    // As in node.test.ts: a request aborted while connecting leaves a connection the server would
    // otherwise hold for its 60 s header timeout.
    server.app.server.closeAllConnections();
    await server.close();
  });

  const enrollPeers = (n: number, prefix: string) =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        new Agent({ server: server.url, hostname: `${prefix}-${i}`, nodeKey: randomNodeKey() }).enroll(authKey),
      ),
    );

  it('fetches the netmap only when the heartbeat says its version changed', async () => {
    const rec = recording();
    const agent = new Agent({
      server: server.url,
      hostname: 'watcher',
      nodeKey: randomNodeKey(),
      connections: false,
      fetch: rec.fetch,
    });
    await agent.enroll(authKey);
    const netmaps = () => rec.calls.filter((c) => c.path === '/v1/node/netmap');

    await agent.tick();
    expect(netmaps()).toHaveLength(1);
    expect(netmaps()[0]!.ifNoneMatch).toBeNull();
    const first = agent.netmap!.version;

    await agent.tick();
    await agent.tick();
    expect(rec.count('POST', '/v1/node/heartbeat')).toBe(3);
    expect(netmaps()).toHaveLength(1);

    // A new device changes the watcher's view: the next heartbeat says so, and one fetch follows.
    const [newcomer] = await enrollPeers(1, 'newcomer');
    await agent.tick();
    expect(netmaps()).toHaveLength(2);
    expect(netmaps()[1]!.ifNoneMatch).toBe(`"${first}"`);
    expect(agent.netmap!.version).not.toBe(first);
    expect(agent.netmap!.peers.map((p) => p.id)).toContain(newcomer!.device.id);

    await agent.tick();
    expect(netmaps()).toHaveLength(2);
  });

  it('keeps at most maxPeers peers, a sample of the netmap, and its version', async () => {
    const peers = await enrollPeers(8, 'crowd');
    const rec = recording();
    const agent = new Agent({
      server: server.url,
      hostname: 'sampler',
      nodeKey: randomNodeKey(),
      connections: false,
      maxPeers: 3,
      fetch: rec.fetch,
    });
    await agent.enroll(authKey);
    await agent.tick();

    const full = (await agent.client.netmap())!;
    const everyone = full.peers.map((p) => p.id);
    expect(everyone).toEqual(expect.arrayContaining(peers.map((p) => p.device.id)));
    expect(agent.netmap!.peers).toHaveLength(3);
    expect(new Set(agent.netmap!.peers.map((p) => p.id)).size).toBe(3);
    for (const peer of agent.netmap!.peers) expect(everyone).toContain(peer.id);
    expect(agent.netmap!.version).toBe(full.version);

    // The kept version still matches the heartbeat's: no fetch while nothing changes (the
    // one above was the test's own).
    await agent.tick();
    expect(rec.count('GET', '/v1/node/netmap')).toBe(2);

    // Without maxPeers an agent keeps them all.
    const whole = new Agent({ server: server.url, hostname: 'whole', nodeKey: randomNodeKey(), connections: false });
    await whole.enroll(authKey);
    await whole.tick();
    expect(whole.netmap!.peers.length).toBeGreaterThanOrEqual(everyone.length);
  });

  it('simulate has at most netmapConcurrency netmap fetches in flight across the fleet', async () => {
    let inFlight = 0;
    let most = 0;
    // Slow netmaps, so that agents overlap if nothing holds them back.
    const slow: typeof fetch = async (input, init) => {
      if (new URL(String(input)).pathname !== '/v1/node/netmap') return fetch(input, init);
      most = Math.max(most, ++inFlight);
      try {
        await new Promise((resolve) => setTimeout(resolve, 40));
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    };
    const rec = recording(slow);
    const sim = await simulate({
      server: server.url,
      authKey,
      count: 12,
      hostnamePrefix: 'fleet',
      heartbeatMs: [10, 30],
      connections: false,
      netmapConcurrency: 2,
      maxPeers: 4,
      fetch: rec.fetch,
    });
    try {
      expect(sim.enrolled).toBe(12);
      await until(() => sim.agents.every((a) => a.netmap !== undefined));
      expect(most).toBeGreaterThanOrEqual(1);
      expect(most).toBeLessThanOrEqual(2);
      for (const agent of sim.agents) expect(agent.netmap!.peers.length).toBeLessThanOrEqual(4);
    } finally {
      await sim.stop();
    }
  });

  it('a shared signal collects no abort listeners, however many requests use it', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    const controller = new AbortController();
    const { signal } = controller;
    const client = new NodeClient({ url: server.url });
    await client.register(authKey, { hostname: 'chatty', os: 'linux', nodeKey: randomNodeKey() }, { signal });
    for (let i = 0; i < 30; i++) await client.heartbeat({}, { signal });
    await client.netmap(undefined, { signal });
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);

    // The simulation's enrollments all follow the caller's signal, 32 at a time.
    const sim = await simulate({
      server: server.url,
      authKey,
      count: 40,
      hostnamePrefix: 'shared',
      heartbeat: false,
      signal,
    });
    expect(sim.enrolled).toBe(40);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
    await sim.stop();
    // Warnings are emitted on a later tick.
    await new Promise((resolve) => setImmediate(resolve));
    process.off('warning', onWarning);
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).toEqual([]);
  });
});

describe('device agent against a server that never answers', () => {
  it('a request gives up after the client timeout', async () => {
    const silent = await silentServer();
    try {
      const client = new NodeClient({ url: silent.url, nodeToken: 'wrn_node_x', timeoutMs: 200 });
      const started = performance.now();
      await expect(client.heartbeat()).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(performance.now() - started).toBeLessThan(2_000);
    } finally {
      await silent.close();
    }
  });

  it('stop() aborts the round in flight and gives up on the disconnect after the timeout', async () => {
    const silent = await silentServer();
    const lines: string[] = [];
    try {
      const agent = new Agent({
        server: silent.url,
        hostname: 'stuck',
        nodeKey: randomNodeKey(),
        nodeToken: 'wrn_node_x',
        timeoutMs: 300,
        log: (line) => lines.push(line),
      });
      agent.start(0);
      await until(() => silent.count('POST /v1/node/heartbeat') === 1);
      const started = performance.now();
      await expect(agent.stop()).rejects.toMatchObject({ name: 'TimeoutError' });
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(silent.count('POST /v1/node/disconnect')).toBe(1);
      // The aborted heartbeat is not worth a line.
      expect(lines).toEqual([]);
    } finally {
      await silent.close();
    }
  });

  it("simulate's stop takes one timeout for the whole fleet, not one per device", async () => {
    const silent = await silentServer({ register: true });
    const lines: string[] = [];
    try {
      const sim = await simulate({
        server: silent.url,
        authKey: 'wrn_auth_x',
        count: 40,
        concurrency: 2,
        heartbeatMs: [0, 50],
        timeoutMs: 1_000,
        progress: (line) => lines.push(line),
      });
      expect(sim.enrolled).toBe(40);
      await until(() => silent.count('POST /v1/node/heartbeat') >= 10);
      const started = performance.now();
      // One timeout per device, two at a time, would be 20 s.
      expect(await sim.stop()).toEqual({ notDisconnected: 40 });
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(lines.filter((l) => !l.startsWith('enrolled '))).toEqual([
        expect.stringMatching(/^40 of 40 devices were not disconnected/),
      ]);
    } finally {
      await silent.close();
    }
  });

  it('a second SIGTERM ends `node simulate` at once while its devices are disconnecting', async () => {
    const silent = await silentServer({ register: true });
    try {
      const child = spawn(
        process.execPath,
        [
          ...WARREN_FROM_SOURCES,
          'node',
          'simulate',
          '--count',
          '3',
          '--auth-key',
          'wrn_auth_x',
          '--server',
          silent.url,
          '--duration',
          '1',
        ],
        { env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      child.stderr.on('data', (chunk) => {
        stderr += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      // --duration ended the run; the disconnects now wait on a server that never answers.
      await until(() => silent.count('POST /v1/node/disconnect') === 3, 15_000);
      expect(child.exitCode).toBeNull();
      const started = performance.now();
      child.kill('SIGTERM');
      expect(await exited).toBe(130);
      expect(performance.now() - started).toBeLessThan(3_000);
      expect(stdout).toContain('enrolled 3 of 3 devices');
      expect(stderr).toContain('exiting without waiting for devices to disconnect');
    } finally {
      await silent.close();
    }
  });
});

describe('the fleet-wide request gate', () => {
  it('keeps at most `limit` requests in flight, queues the rest, and drops a waiter that aborts', async () => {
    let inFlight = 0;
    let most = 0;
    const releases: Array<() => void> = [];
    const slow: typeof fetch = async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((resolve) => releases.push(resolve));
      inFlight--;
      return new Response('{"ok":true}', { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const gated = gatedFetch(slow, 2);
    const quitter = new AbortController();
    const calls = Array.from({ length: 6 }, (_, i) =>
      gated('http://127.0.0.1/', i === 3 ? { signal: quitter.signal } : {}),
    );
    await until(() => releases.length === 2);
    quitter.abort(new Error('gave up'));
    await expect(calls[3]).rejects.toThrow('gave up');
    // Let the rest through two at a time.
    for (let released = 0; released < 5; released++) {
      await until(() => releases.length > 0);
      releases.shift()!();
    }
    const answered = await Promise.all(calls.filter((_, i) => i !== 3));
    expect(answered.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await answered[4]!.json()).toEqual({ ok: true });
    expect(most).toBe(2);
  });
});

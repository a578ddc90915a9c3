/**
 * Simulated Tailscale-protocol devices survive their server going away, as tailscaled does:
 * `warren serve` is killed under them and started again on the same address and database, and
 * every device comes back by itself with the keys it registered, receives a full map, then
 * follows later changes as deltas. Without the reconnect the fleet would stay disconnected.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MapMessage } from '@warren/server';
import { backend } from '@warren/server/testing';
import { afterAll, describe, expect, it } from 'vitest';
import { simulateTailscale } from '../src/node/tailscale-simulator.js';
import { WARREN_FROM_SOURCES } from './bin.js';

// `warren serve` starts from the sources (tsx compiles them at each start): slow on a busy machine.
const TIMEOUT_MS = 360_000;
const dir = mkdtempSync(join(tmpdir(), 'warren-ts-reconnect-'));
const db = `sqlite:${join(dir, 'warren.db')}`;
const children = new Set<ChildProcess>();
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === 'object' && address ? address.port : 0;
}

/** `warren serve` on `port` and the test's database, once it answers. */
async function serve(port: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [...WARREN_FROM_SOURCES, 'serve', '--host', '127.0.0.1', '--port', String(port), '--db', db],
    { stdio: 'ignore', env: { ...process.env, WARREN_LOG_LEVEL: 'warn' } },
  );
  children.add(child);
  await until(() =>
    fetch(`http://127.0.0.1:${port}/readyz`).then(
      (r) => r.ok,
      () => false,
    ),
  );
  return child;
}

async function until(check: () => boolean | Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const start = Date.now();
  while (!(await check())) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('simulated Tailscale-protocol devices', { timeout: TIMEOUT_MS }, () => {
  // The server it kills serves a SQLite file of its own whatever the project: run it once.
  it.runIf(backend === 'sqlite')(
    'reconnect after their server is killed and restarted: a full map, then deltas',
    async () => {
      const { apiKey } = JSON.parse(
        execFileSync(process.execPath, [...WARREN_FROM_SOURCES, 'init', '--db', db, '--network', 'n', '--json'], {
          encoding: 'utf8',
        }),
      ) as { apiKey: string };
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const call = async (method: string, path: string, body?: string, type = 'application/json') => {
        const res = await fetch(`${url}${path}`, {
          method,
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': type },
          body,
        });
        expect(res.status, `${method} ${path}`).toBeLessThan(300);
        return (await res.json()) as Record<string, unknown>;
      };
      let server = await serve(port);
      const { key } = (await call('POST', '/v1/keys', JSON.stringify({ type: 'auth', reusable: true }))) as {
        key: string;
      };

      const log = new Map<number, MapMessage[]>();
      const sim = await simulateTailscale({
        server: url,
        authKey: key,
        count: 4,
        concurrency: 4,
        hostnamePrefix: 'rc',
        backoff: { firstMs: 100, maxMs: 1_000 },
        onMessage: (index, map) => {
          if (map.KeepAlive === true && Object.keys(map).length === 1) return;
          log.set(index, [...(log.get(index) ?? []), map]);
        },
      });
      try {
        expect(sim).toMatchObject({ connected: 4, failed: 0 });
        await until(() => sim.devices.every((d) => d.peers.size === 3));
        expect(sim.reconnects()).toBe(0);

        server.kill('SIGKILL');
        await new Promise((resolve) => server.once('exit', resolve));
        await until(() => sim.connectedNow() === 0);
        const before = new Map(sim.devices.map((d) => [d.index, log.get(d.index)?.length ?? 0]));
        // Nothing drops a peer while the server is away: the full map that comes back replaces them.
        for (const d of sim.devices) d.peers.clear();

        server = await serve(port);
        await until(() => sim.connectedNow() === 4 && sim.devices.every((d) => d.peers.size === 3));
        expect(sim.devices.every((d) => d.reconnects >= 1)).toBe(true);
        for (const d of sim.devices) {
          const first = log.get(d.index)?.[before.get(d.index) ?? 0];
          expect(Array.isArray(first?.Peers), `device ${d.index}'s first message after reconnecting`).toBe(true);
          expect(first?.Peers).toHaveLength(3);
        }

        // A later change arrives on the new streams as a delta, not as another full map.
        const after = new Map(sim.devices.map((d) => [d.index, log.get(d.index)?.length ?? 0]));
        await call(
          'PUT',
          '/v1/acl',
          '{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:8443"] }] }',
          'application/hujson',
        );
        const changed = (index: number) =>
          (log.get(index) ?? [])
            .slice(after.get(index))
            .find((m) => JSON.stringify(m.PacketFilter ?? '').includes('8443'));
        await until(() => sim.devices.every((d) => changed(d.index) !== undefined));
        for (const d of sim.devices) expect(changed(d.index)?.Peers).toBeUndefined();

        // The same four devices: they came back with the keys they registered, not as new ones.
        const list = (await call('GET', '/v1/devices')) as { devices: Array<{ name: string }> };
        expect(list.devices.map((d) => d.name).sort()).toEqual(['rc-1', 'rc-2', 'rc-3', 'rc-4']);
      } finally {
        sim.stop();
        server.kill('SIGTERM');
      }
    },
  );
});

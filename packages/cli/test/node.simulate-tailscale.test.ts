/**
 * `warren node simulate --protocol tailscale`: devices that speak Tailscale's control protocol
 * register, are listed as Tailscale devices, hold map streams that follow the network's
 * changes, and a refused auth key is said once.
 */

import { applyPolicy, json, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateTailscale } from '../src/node/tailscale-simulator.js';
import { warren } from './run.js';

describe('warren node simulate --protocol tailscale', () => {
  let server: TestServer;
  let authKey: string;
  beforeAll(async () => {
    server = await startServer();
    authKey = (await json(await server.call('POST', '/v1/keys', { body: { reusable: true } }))).key;
  });
  afterAll(async () => {
    server.app.server.closeAllConnections();
    await server.close();
  });

  // Six Noise handshakes, registrations and map streams, then a policy change: on a loaded
  // machine that passes the default 20 s.
  it('registers every device, each stream sees the others and follows a policy change', {
    timeout: 90_000,
  }, async () => {
    const filters = new Map<number, unknown>();
    const sim = await simulateTailscale({
      server: server.url,
      authKey,
      count: 6,
      concurrency: 3,
      hostnamePrefix: 'ts',
      onMessage: (index, map) => {
        if (map.PacketFilter) filters.set(index, map.PacketFilter);
      },
    });
    try {
      expect(sim).toMatchObject({ connected: 6, failed: 0 });
      const list = await json(await server.call('GET', '/v1/devices?fields=all'));
      expect(list.devices.map((d: { name: string }) => d.name).sort()).toEqual(
        ['ts-1', 'ts-2', 'ts-3', 'ts-4', 'ts-5', 'ts-6'].sort(),
      );
      expect(new Set(list.devices.map((d: { protocol: string }) => d.protocol))).toEqual(new Set(['tailscale']));
      // Every stream ends up with the five others as peers (the later ones arrive as deltas).
      await until(() => sim.devices.every((d) => d.peers.size === 5));

      await applyPolicy(server, '{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:8443"] }] }');
      const wanted = [{ SrcIPs: ['*'], DstPorts: [{ IP: '*', Ports: { First: 8443, Last: 8443 } }] }];
      await until(() => sim.devices.every((d) => JSON.stringify(filters.get(d.index)) === JSON.stringify(wanted)));
    } finally {
      sim.stop();
    }
  });

  it('the command reports a refused auth key once and exits 1', { timeout: 90_000 }, async () => {
    const res = await warren(
      // The duration only bounds the run (it ends once no device could connect); a short one
      // would end it before a loaded server had answered, with nothing refused yet.
      [
        'node',
        'simulate',
        '--protocol',
        'tailscale',
        '--count',
        '5',
        '--auth-key',
        'wrn_auth_nope',
        '--duration',
        '60',
      ],
      { WARREN_URL: server.url },
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^connected 0 of 5 Tailscale-protocol devices in .*; \d failed$/m);
    expect(res.stderr.split('\n').filter((line) => /auth key/i.test(line))).toHaveLength(1);
    expect(res.stderr).toMatch(/^warren: no device connected$/m);
  });

  it('refuses an unknown protocol', async () => {
    const res = await warren(['node', 'simulate', '--protocol', 'carrier-pigeon', '--count', '1', '--auth-key', 'k'], {
      WARREN_URL: server.url,
    });
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--protocol must be native or tailscale/);
  });
});

async function until(check: () => boolean, timeoutMs = 60_000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > timeoutMs) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

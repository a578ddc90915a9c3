/**
 * `warren node simulate` says why enrollments failed: each distinct reason (the problem's code
 * and detail) once, with how many devices it stopped, however many devices there were.
 */

import { json, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { printReasons, simulate } from '../src/commands/node.js';
import { warren } from './run.js';

describe('warren node simulate: failed enrollments', () => {
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

  it('counts failures per distinct reason, with the code and the detail', async () => {
    const sim = await simulate({
      server: server.url,
      authKey,
      count: 12,
      concurrency: 4,
      advertiseRoutes: ['100.64.0.0/10'],
      heartbeat: false,
    });
    expect(sim).toMatchObject({ enrolled: 0, failed: 12, failures: { invalid_prefix: 12 } });
    const reasons = Object.entries(sim.reasons);
    expect(reasons).toHaveLength(1);
    expect(reasons[0]?.[0]).toMatch(
      /^invalid_prefix: route "100\.64\.0\.0\/10" rejected: it overlaps 100\.64\.0\.0\/10/,
    );
    expect(reasons[0]?.[1]).toBe(12);
    await sim.stop();
  });

  it('prints one line per reason on stderr, most frequent first, and caps the list', () => {
    let stderr = '';
    const io = {
      out: () => {},
      err: (text: string) => {
        stderr += text;
      },
      env: {},
    };
    const reasons: Record<string, number> = { 'plan_limit: the free plan allows 100 devices': 9_900 };
    for (let i = 0; i < 15; i++) reasons[`unreachable: fetch failed (ECONNRESET ${i})`] = i + 1;
    reasons['invalid_prefix: route "x\u001b[2J" rejected'] = 100;
    printReasons(io, reasons);
    const lines = stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(11);
    expect(lines[0]).toBe('  9900 × plan_limit: the free plan allows 100 devices');
    expect(lines[1]).toBe('  100 × invalid_prefix: route "x\\x1b[2J" rejected');
    expect(lines[2]).toBe('  15 × unreachable: fetch failed (ECONNRESET 14)');
    // the 7 least frequent: 1 + 2 + … + 7
    expect(lines[10]).toBe('  28 × for 7 other reasons');
  });

  it('the command prints the reasons once, not once per device, and exits 1', async () => {
    const res = await warren(
      ['node', 'simulate', '--count', '20', '--auth-key', authKey, '--advertise-routes', '127.0.0.0/8', '--no-netmap'],
      { WARREN_URL: server.url },
    );
    expect(res.code).toBe(1);
    expect(res.stdout).toMatch(/^enrolled 0 of 20 devices in .*; 20 failed \(invalid_prefix ×20\)$/m);
    const reasonLines = res.stderr.split('\n').filter((l) => l.includes('invalid_prefix'));
    expect(reasonLines).toEqual([
      expect.stringMatching(/^ {2}20 × invalid_prefix: route "127\.0\.0\.0\/8" rejected: .*loopback/),
    ]);
    expect(res.stderr).toMatch(/^warren: no device was enrolled$/m);
  });
});

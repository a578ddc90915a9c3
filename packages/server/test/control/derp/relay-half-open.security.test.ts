/**
 * The relay's upgrade faces the internet before any authentication: ten thousand connections
 * that start an upgrade and never finish it (headers cut short, or upgraded and then silent,
 * never saying hello) are each closed in bounded time, and two honest clients are relayed
 * while they are held. The limits are shortened here (the defaults are 10 s for headers and
 * 10 s to say hello).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, FrameType } from '../../../src/control/derp/frames.js';
import { rawPublicKey } from '../../../src/control/derp/nacl-box.js';
import { json, startServer, type TestServer } from '../../harness.js';
import { holdHalfOpen } from '../half-open.js';
import { Connection, enrolledKey } from './derp-client.js';

const TIMEOUTS = { headersMs: 1_000, requestMs: 2_000, keepAliveMs: 1_500, checkIntervalMs: 200 };
const HELLO_MS = 1_500;
/** The longest limit, plus room for a loaded machine. */
const CLOSED_WITHIN = Math.max(TIMEOUTS.requestMs, HELLO_MS) + 9_000;

let server: TestServer;
let port: number;
let authKey: string;

beforeAll(async () => {
  server = await startServer({ relay: { stunPort: null, handshakeTimeoutMs: HELLO_MS }, timeouts: TIMEOUTS });
  port = Number(new URL(server.url).port);
  authKey = (await json(await server.call('POST', '/v1/keys', { body: { reusable: true, expiresIn: '1h' } }))).key;
});
afterAll(() => server.close());

const UPGRADE = 'GET /derp HTTP/1.1\r\nHost: relay\r\nUpgrade: DERP\r\nConnection: Upgrade\r\n\r\n';

describe('half-open relay upgrades', () => {
  it('closes 10,000 half-open upgrades in time while honest clients are relayed', async () => {
    const batch: Array<[string, number]> = [
      [UPGRADE.slice(0, UPGRADE.indexOf('Upgrade:')), 190],
      [UPGRADE, 10],
    ];
    const attack = holdHalfOpen(
      port,
      Array.from({ length: 50 }, () => batch),
    );
    try {
      expect(await attack.opened).toBe(10_000);
      const [aliceKey, bobKey] = [await enrolledKey(server, authKey), await enrolledKey(server, authKey)];
      const alice = await Connection.open(server);
      const bob = await Connection.open(server);
      alice.hello(aliceKey);
      bob.hello(bobKey);
      for (const c of [alice, bob]) await c.until((c) => c.frames.some((f) => f.type === FrameType.serverInfo), 20_000);
      alice.socket.write(encodeFrame(FrameType.sendPacket, rawPublicKey(bobKey), Buffer.from('through the crowd')));
      await bob.until((c) => c.frames.some((f) => f.type === FrameType.recvPacket), 20_000);
      const packet = bob.frames.find((f) => f.type === FrameType.recvPacket);
      expect(packet?.body.subarray(32).toString()).toBe('through the crowd');
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      const { closed, slowest } = await attack.closed;
      expect(closed).toBe(10_000);
      expect(slowest).toBeLessThan(CLOSED_WITHIN);
      alice.socket.destroy();
      bob.socket.destroy();
    } finally {
      attack.stop();
    }
  }, 120_000);
});

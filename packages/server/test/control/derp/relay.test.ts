/**
 * The relay over real HTTP, as a hostile or careless client would use it. (Interoperability with
 * Tailscale's own DERP client is checked by e2e/relay with tailscale.com/derp/derphttp.)
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFrame, FrameType, MAGIC } from '../../../src/control/derp/frames.js';
import { open, rawPublicKey, seal } from '../../../src/control/derp/nacl-box.js';
import { json, startServer, type TestServer } from '../../harness.js';
import { rawRequest } from '../../http/raw-http.js';
import { Connection as DerpConnection, enrolledKey as enrolledKeyOf } from './derp-client.js';

let server: TestServer;
let authKey: string;

beforeAll(async () => {
  server = await startServer({ relay: { stunPort: null } });
  const created = await json(await server.call('POST', '/v1/keys', { body: { reusable: true, expiresIn: '1h' } }));
  authKey = created.key;
});
afterAll(() => server.close());

const enrolledKey = () => enrolledKeyOf(server, authKey);
const Connection = { open: () => DerpConnection.open(server) };

describe('the embedded DERP relay', () => {
  it('greets with its key, then relays between two enrolled devices', async () => {
    const [aliceKey, bobKey] = [await enrolledKey(), await enrolledKey()];
    const alice = await Connection.open();
    const bob = await Connection.open();
    const relayKey = alice.hello(aliceKey);
    bob.hello(bobKey);
    expect(alice.frames[0]?.body.subarray(0, MAGIC.length)).toEqual(MAGIC);
    await alice.until((c) => c.frames.some((f) => f.type === FrameType.serverInfo));
    const info = alice.frames.find((f) => f.type === FrameType.serverInfo);
    expect(JSON.parse(open(info!.body, aliceKey, relayKey)!.toString())).toEqual({ version: 2 });
    await bob.until((c) => c.frames.some((f) => f.type === FrameType.serverInfo));

    alice.socket.write(encodeFrame(FrameType.sendPacket, rawPublicKey(bobKey), Buffer.from('ping over derp')));
    await bob.until((c) => c.frames.some((f) => f.type === FrameType.recvPacket));
    const packet = bob.frames.find((f) => f.type === FrameType.recvPacket)!;
    expect(packet.body.subarray(0, 32)).toEqual(rawPublicKey(aliceKey));
    expect(packet.body.subarray(32).toString()).toBe('ping over derp');
    alice.socket.destroy();
    bob.socket.destroy();
  });

  it('closes the connection of a node key no device has, relaying nothing', async () => {
    const stranger = await Connection.open();
    stranger.hello(generateKeyPairSync('x25519').privateKey);
    await stranger.until((c) => c.closed);
    expect(stranger.frames.map((f) => f.type)).toEqual([FrameType.serverKey]);
  });

  it('closes a connection whose first frame is not its hello, or that announces a huge frame', async () => {
    const rude = await Connection.open();
    rude.socket.write(encodeFrame(FrameType.sendPacket, Buffer.alloc(32), Buffer.from('x')));
    await rude.until((c) => c.closed);

    const greedy = await Connection.open();
    greedy.socket.write(Buffer.from([FrameType.clientInfo, 0x7f, 0xff, 0xff, 0xff]));
    await greedy.until((c) => c.closed);
  });

  it('closes a client that proves a key with a box sealed by another', async () => {
    const forger = await Connection.open();
    const victim = await enrolledKey();
    const serverKey = forger.frames[0]!.body.subarray(MAGIC.length);
    const box = seal(Buffer.from('{}'), generateKeyPairSync('x25519').privateKey, serverKey);
    forger.socket.write(encodeFrame(FrameType.clientInfo, rawPublicKey(victim), box));
    await forger.until((c) => c.closed);
    expect(forger.frames.some((f) => f.type === FrameType.serverInfo)).toBe(false);
  });

  it('answers /derp without an upgrade with a problem', async () => {
    const response = await rawRequest(server.url, 'GET', '/derp');
    expect(response.status).toBe(426);
    expect(response.headers.upgrade).toBe('DERP');
    expect(JSON.parse(response.body)).toMatchObject({ status: 426, code: 'upgrade_required' });
  });

  it('leaves other upgrades to the router: an API call offering h2c is answered as usual', async () => {
    const response = await rawRequest(server.url, 'GET', '/healthz', { Connection: 'Upgrade', Upgrade: 'h2c' });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ status: 'ok' });
    const websocket = await rawRequest(server.url, 'GET', '/derp', { Connection: 'Upgrade', Upgrade: 'websocket' });
    expect(websocket.status).toBe(426);
  });

  it('answers the captive-portal check and the probes without auditing them', async () => {
    const portal = await rawRequest(server.url, 'GET', '/generate_204', { 'X-Tailscale-Challenge': 'ts_abc.123' });
    expect(portal.status).toBe(204);
    expect(portal.headers['x-tailscale-response']).toBe('response ts_abc.123');
    const odd = await rawRequest(server.url, 'GET', '/generate_204', { 'X-Tailscale-Challenge': 'no spaces allowed' });
    expect(odd.headers['x-tailscale-response']).toBeUndefined();
    for (const path of ['/derp/probe', '/derp/latency-check']) {
      expect((await rawRequest(server.url, 'GET', path)).status).toBe(200);
      expect((await rawRequest(server.url, 'HEAD', path)).status).toBe(200);
    }
    await rawRequest(server.url, 'GET', '/v1/devices'); // an unauthenticated API call is audited
    await server.app.ctx.audit.flush();
    const paths = (await server.app.ctx.db.selectFrom('audit_log').select('path').execute()).map((e) => e.path);
    expect(paths).toContain('/v1/devices');
    expect(paths.filter((p) => /derp|generate_204/.test(p))).toEqual([]);
  });
});

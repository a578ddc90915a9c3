/**
 * The WebSocket form of /ts2021, as Tailscale's browser client dials it: GET with the control
 * protocol as subprotocol and the Noise initiation in the query, then the same Noise channel
 * and HTTP/2 in binary messages. A device joins and follows its map exactly as over the TCP
 * upgrade; a WebSocket without the subprotocol or the initiation is not upgraded.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';
import { initiate } from '../../../src/control/tailscale/noise-handshake.js';
import { MAX_WEBSOCKET_MESSAGE } from '../../../src/control/tailscale/ts2021.js';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';
import { controlClient, decodeMessages, mapRequest, nodeKey, serverKey } from './ts-client.js';

const t = protocolFixture();

/** Whether a WebSocket to `path` opens (else the HTTP status the server answered). */
function dial(path: string, protocols?: string): Promise<'open' | number> {
  return new Promise((resolve) => {
    const socket = new WebSocket(`${t.server.url.replace('http:', 'ws:')}${path}`, protocols);
    socket.once('open', () => {
      socket.close();
      resolve('open');
    });
    socket.once('unexpected-response', (_request, response) => {
      resolve(response.statusCode ?? 0);
      socket.terminate();
    });
    socket.once('error', () => resolve(0));
  });
}

describe('/ts2021 over a WebSocket', () => {
  it('registers a machine and streams its map, as the upgrade does', async () => {
    const key = await t.authKey();
    const peer = await t.joined(key, 'alpha');
    const client = await controlClient(t.server.url, undefined, 'websocket');
    try {
      const nk = nodeKey();
      const registered = await client.post('/machine/register', {
        NodeKey: nk,
        Auth: { AuthKey: key },
        Hostinfo: { Hostname: 'browser', OS: 'js', IPNVersion: '1.102.5' },
      });
      expect(registered.status).toBe(200);
      expect(JSON.parse(registered.body.toString()).MachineAuthorized).toBe(true);

      const stream = client.stream(mapRequest(nk, true));
      await stream.next(1);
      const full = stream.messages[0] as { Node: { Name: string }; Peers: Array<{ Name: string }> };
      expect(full.Node.Name).toMatch(/^browser\./);
      expect(full.Peers.map((p) => p.Name.split('.')[0])).toEqual(['alpha']);

      // A change made through /v1 reaches the WebSocket's stream as a delta.
      const alpha = await t.deviceId('alpha');
      expect((await t.server.call('DELETE', `/v1/devices/${alpha}`)).status).toBe(204);
      await stream.next(2);
      stream.close();
      expect(JSON.stringify(stream.messages[1])).toContain('PeersRemoved');
      const once = await client.post('/machine/map', mapRequest(nk, false));
      expect((decodeMessages(once.body)[0] as { Peers?: unknown[] }).Peers ?? []).toEqual([]);
      const { devices } = await json(await t.server.call('GET', '/v1/devices?fields=all'));
      expect(devices.map((d: { name: string; protocol: string }) => [d.name, d.protocol])).toEqual([
        ['browser', 'tailscale'],
      ]);
    } finally {
      client.close();
      peer.client.close();
    }
  });

  it('closes a WebSocket whose message is larger than any record, before holding more of it', async () => {
    const hello = initiate(x25519Generate(), await serverKey(t.server.url), 142);
    const init = encodeURIComponent(hello.initiation.toString('base64'));
    const socket = new WebSocket(
      `${t.server.url.replace('http:', 'ws:')}/ts2021?X-Tailscale-Handshake=${init}`,
      'tailscale-control-protocol',
    );
    socket.on('error', () => {});
    // The handshake's response arrives as the first message; then one message too large.
    await new Promise((resolve) => socket.once('message', resolve));
    const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
    socket.send(Buffer.alloc(MAX_WEBSOCKET_MESSAGE + 1024, 4));
    expect(await closed).toBe(1009);
  });

  it('is not upgraded without the subprotocol, or without a well-formed initiation', async () => {
    const init = encodeURIComponent(randomBytes(101).toString('base64'));
    expect(await dial(`/ts2021?X-Tailscale-Handshake=${init}`)).not.toBe('open');
    expect(await dial('/ts2021', 'tailscale-control-protocol')).not.toBe('open');
    expect(await dial('/ts2021?X-Tailscale-Handshake=AAAA', 'tailscale-control-protocol')).not.toBe('open');
  });
});

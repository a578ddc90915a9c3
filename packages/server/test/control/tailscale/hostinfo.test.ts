/**
 * What a Tailscale client reports in its map requests' Hostinfo reaches the device's record and
 * its peers: an upgraded client shows its new version in /v1, a renamed host its hostname, and
 * the peer API ports (Hostinfo.Services) reach peers.
 */
import { expect, it } from 'vitest';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';
import { decodeMessages } from './ts-client.js';

const t = protocolFixture();

it('an upgraded client’s version, OS and hostname from its map request reach /v1 and its peers', async () => {
  const key = await t.authKey();
  const alpha = await t.joined(key, 'alpha');
  const beta = await t.joined(key, 'beta');
  const services = [{ Proto: 'peerapi4', Port: 45678 }];
  const report = await alpha.client.post('/machine/map', {
    Version: 142,
    NodeKey: alpha.nodeKey,
    Stream: false,
    OmitPeers: true,
    Hostinfo: { Hostname: 'alpha-renamed', OS: 'windows', IPNVersion: '1.104.0-t0123', Services: services },
  });
  expect(report.status).toBe(200);
  const list = await json(await t.server.call('GET', '/v1/devices?fields=all'));
  const device = list.devices.find((d: { name: string }) => d.name === 'alpha');
  expect(device).toMatchObject({ clientVersion: '1.104.0-t0123', os: 'windows', hostname: 'alpha-renamed' });

  const map = await beta.client.post('/machine/map', { Version: 142, NodeKey: beta.nodeKey, Stream: false });
  const [full] = decodeMessages(map.body);
  const [peer] = full.Peers as Array<{ Hostinfo: Record<string, unknown> }>;
  expect(peer.Hostinfo).toMatchObject({ Hostname: 'alpha-renamed', OS: 'windows', Services: services });

  // A request without Hostinfo (an endpoint update) changes none of it.
  await alpha.client.post('/machine/map', { Version: 142, NodeKey: alpha.nodeKey, Stream: false, OmitPeers: true });
  const again = await json(await t.server.call('GET', '/v1/devices?fields=all'));
  expect(again.devices.find((d: { name: string }) => d.name === 'alpha')).toMatchObject({
    clientVersion: '1.104.0-t0123',
    os: 'windows',
  });
});

/**
 * Taildrop over real HTTP: what a Tailscale client's map must carry for `tailscale file cp`.
 * The client sends only when its own node has the file-sharing capability, and only to peers
 * of its own user (the same `User` id); the receiver takes files only from its user's untagged
 * devices. So the map gives every device's own node the capability, names each peer's user
 * truthfully, and puts every tagged device under the one tagged-devices user.
 */
import { describe, expect, it } from 'vitest';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';
import { type ControlClient, decodeMessages, mapRequest } from './ts-client.js';

const CAP_FILE_SHARING = 'https://tailscale.com/cap/file-sharing';
const TAGGED_USER_ID = 2147455555;
const t = protocolFixture();

interface MapNode {
  Name: string;
  User: number;
  Tags?: string[];
  CapMap?: Record<string, unknown[]>;
}

async function fullMap(device: { client: ControlClient; nodeKey: string }) {
  const res = await device.client.post('/machine/map', mapRequest(device.nodeKey, false));
  expect(res.status).toBe(200);
  return decodeMessages(res.body)[0] as { Node: MapNode; Peers: MapNode[] };
}

const POLICY =
  '{"tagOwners":{"tag:server":["autogroup:admin"]},"acls":[{"action":"accept","src":["*"],"dst":["*:22"]}]}';

describe('Taildrop: what the map carries', () => {
  it('each device’s own node has the file-sharing capability, and each peer its user, tagged ones the tagged user', async () => {
    const user = await t.server.call('POST', '/v1/users', {
      body: { loginName: 'sam@example.com', displayName: 'Sam', role: 'member' },
    });
    expect(user.status).toBe(201);
    // Every device reaches every other, so each is a peer of each: the client picks its targets among peers.
    const policy = await t.server.call('PUT', '/v1/acl', {
      headers: { 'content-type': 'application/hujson' },
      raw: POLICY,
    });
    expect(policy.status).toBe(200);
    const owned = await t.authKey();
    const alpha = await t.joined(owned, 'alpha');
    const beta = await t.joined(owned, 'beta');
    const gamma = await t.joined(await t.authKey({ user: (await json(user)).id }), 'gamma');
    const srv = await t.joined(await t.authKey({ tags: ['tag:server'] }), 'srv');

    for (const device of [alpha, beta, gamma, srv]) {
      const map = await fullMap(device);
      expect(map.Node.CapMap).toHaveProperty([CAP_FILE_SHARING], []);
      expect(map.Peers.length).toBe(3);
      for (const peer of map.Peers) expect(peer).not.toHaveProperty('CapMap');
    }
    const map = await fullMap(alpha);
    const userOf = Object.fromEntries(map.Peers.map((p) => [p.Name.split('.')[0], p.User]));
    expect(userOf.beta).toBe(map.Node.User);
    expect(userOf.gamma).not.toBe(map.Node.User);
    expect(userOf.srv).toBe(TAGGED_USER_ID);
    expect((await fullMap(srv)).Node.User).toBe(TAGGED_USER_ID);
  });
});

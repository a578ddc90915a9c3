import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPolicy, policyDefining } from '../acl/helpers.js';
import { expectProblem, heartbeat, nodeCall } from '../devices/helpers.js';
import { startServer, type TestServer } from '../harness.js';
import { createUser, type Devices, enrollAll, netmap, peerNames } from './helpers.js';

describe('GET /v1/node/netmap: peers follow the policy', () => {
  let server: TestServer;
  let d: Devices;
  beforeAll(async () => {
    server = await startServer();
    await createUser(server, 'ana@example.com');
    await createUser(server, 'bo@example.com');
    await applyPolicy(server, policyDefining(['tag:server']));
    d = await enrollAll(server, {
      'ana-1': { user: 'ana@example.com' },
      'ana-2': { user: 'ana@example.com' },
      'bo-1': { user: 'bo@example.com' },
      'own-1': {},
      srv: { tags: ['tag:server'] },
    });
  });
  afterAll(() => server.close());

  it('returns self, its peers and a version, with the version as ETag', async () => {
    const read = await netmap(server, d['ana-1'].nodeToken);
    expect(read.status).toBe(200);
    const { self, peers, version } = read.body;
    expect(read.etag).toBe(`"${version}"`);
    expect(Number.isInteger(version)).toBe(true);
    expect(self).toMatchObject({
      id: d['ana-1'].device.id,
      name: 'ana-1',
      addresses: d['ana-1'].device.addresses,
      routes: [],
      user: { loginName: 'ana@example.com' },
    });
    const ana2 = d['ana-2'].device;
    expect(peers.find((p: any) => p.id === ana2.id)).toEqual({
      id: ana2.id,
      name: 'ana-2',
      addresses: ana2.addresses,
      allowedIPs: [`${ana2.addresses[0]}/32`, `${ana2.addresses[1]}/128`],
      tags: [],
      online: true,
    });
  });

  it('under the default policy: members see their own devices, admins everything', async () => {
    // own-1 belongs to the owner (autogroup:admin reaches *:*), so everyone is reached by it.
    expect(await peerNames(server, d['ana-1'])).toEqual(['ana-2', 'own-1']);
    expect(await peerNames(server, d['ana-2'])).toEqual(['ana-1', 'own-1']);
    expect(await peerNames(server, d['bo-1'])).toEqual(['own-1']);
    expect(await peerNames(server, d['own-1'])).toEqual(['ana-1', 'ana-2', 'bo-1', 'srv']);
    // A tagged device is its tags alone: not the owner's own device.
    expect(await peerNames(server, d.srv)).toEqual(['own-1']);
  });

  it('follows groups, tags and autogroup:self of a new policy at once', async () => {
    await applyPolicy(
      server,
      `{
        "groups": { "group:eng": ["ana@example.com"] },
        "tagOwners": { "tag:server": ["group:eng"] },
        "acls": [
          { "action": "accept", "src": ["autogroup:member"], "dst": ["autogroup:self:*"] },
          { "action": "accept", "src": ["group:eng"], "dst": ["tag:server:22"] },
        ],
      }`,
    );
    expect(await peerNames(server, d['ana-1'])).toEqual(['ana-2', 'srv']);
    expect(await peerNames(server, d.srv)).toEqual(['ana-1', 'ana-2']);
    expect(await peerNames(server, d['bo-1'])).toEqual([]);
    expect(await peerNames(server, d['own-1'])).toEqual([]);

    // Tagging bo's device puts it on the server side of the rule.
    const res = await server.call('POST', `/v1/devices/${d['bo-1'].device.id}/tags`, {
      body: { tags: ['tag:server'] },
    });
    expect(res.status).toBe(200);
    expect(await peerNames(server, d['ana-1'])).toEqual(['ana-2', 'bo-1', 'srv']);
    expect(await peerNames(server, d['bo-1'])).toEqual(['ana-1', 'ana-2']);
  });

  it('answers 304 without a body while If-None-Match holds the version, quoted or bare', async () => {
    const first = await netmap(server, d['ana-1'].nodeToken);
    const version = first.body.version;
    // The rules of every conditional read of /v1 (lib/entity-tags.ts).
    for (const tag of [`"${version}"`, String(version), `W/"${version}"`, `"0", "${version}"`, '*', ` "${version}" `]) {
      const again = await netmap(server, d['ana-1'].nodeToken, tag);
      expect(again.status, tag).toBe(304);
      expect(again.body).toBeNull();
      expect(again.etag).toBe(`"${version}"`);
    }
    for (const tag of [`"${version + 1}"`, `"${version}`, `W/ "${version}"`, `"0${version}"`, '']) {
      expect((await netmap(server, d['ana-1'].nodeToken, tag)).status, tag).toBe(200);
    }
    // A heartbeat changes lastSeen, not the view.
    server.clock.advance(1_000);
    expect((await heartbeat(server, d['ana-1'].nodeToken)).body.netmapVersion).toBe(version);
    expect((await netmap(server, d['ana-1'].nodeToken, `"${version}"`)).status).toBe(304);
  });

  it('drops a deleted device from every netmap and refuses its credential', async () => {
    const gone = d['ana-2'];
    expect((await server.call('DELETE', `/v1/devices/${gone.device.id}`)).status).toBe(204);
    await expectProblem(await server.call('GET', '/v1/node/netmap', { key: gone.nodeToken }), 401, 'unauthenticated');
    expect(await peerNames(server, d['ana-1'])).toEqual(['bo-1', 'srv']);
    expect(await peerNames(server, d.srv)).toEqual(['ana-1']);
  });

  it('refuses API keys and garbage where a node credential belongs', async () => {
    await expectProblem(await server.call('GET', '/v1/node/netmap'), 401, 'unauthenticated');
    await expectProblem(await server.call('GET', '/v1/node/netmap', { key: 'wrn_node_x' }), 401, 'unauthenticated');
    await expectProblem(await server.call('GET', '/v1/node/netmap', { key: null }), 401, 'unauthenticated');
  });

  it('keeps networks apart', async () => {
    const other = await server.addNetwork();
    const key = await server.call('POST', '/v1/keys', { key: other.apiKey, body: {} });
    const { key: authKey } = (await key.json()) as { key: string };
    const res = await server.call('POST', '/v1/node/register', {
      key: authKey,
      body: { hostname: 'elsewhere', os: 'linux', nodeKey: `nodekey:${'ab'.repeat(32)}` },
    });
    const stranger = (await res.json()) as { nodeToken: string };
    expect((await netmap(server, stranger.nodeToken)).body.peers).toEqual([]);
    expect(await peerNames(server, d['own-1'])).not.toContain('elsewhere');
    expect((await nodeCall(server, stranger.nodeToken, 'disconnect')).status).toBe(204);
  });
});

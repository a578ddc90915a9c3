/**
 * Device approval and login expiry as a Tailscale client meets them over the real protocol:
 * `MachineAuthorized` at register and in its own node, no peers while it waits, approval
 * reaching open map streams; `KeyExpiry` in maps, an expired login answered `NodeKeyExpired`
 * and renewed only with an auth key, keeping the device.
 */
import { describe, expect, it } from 'vitest';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';
import { type ControlClient, decodeMessages, nodeKey } from './ts-client.js';

type Message = Record<string, unknown>;
type Node = { ID: number; Name: string; MachineAuthorized: boolean; KeyExpiry: string; Expired?: boolean };

const ZERO_TIME = '0001-01-01T00:00:00Z';

const t = protocolFixture();
const { authKey, joined, deviceId } = t;

async function register(client: ControlClient, body: Record<string, unknown>): Promise<Message> {
  const res = await client.post('/machine/register', body);
  expect(res.status).toBe(200);
  return JSON.parse(res.body.toString());
}

const mapRequest = (nk: string, stream: boolean) => ({
  Version: 142,
  NodeKey: nk,
  DiscoKey: `discokey:${'1'.repeat(64)}`,
  Stream: stream,
  Compress: 'zstd',
  Hostinfo: { OS: 'linux' },
});

async function mapOnce(client: ControlClient, nk: string): Promise<{ node: Node; peers: Node[] }> {
  const res = await client.post('/machine/map', mapRequest(nk, false));
  expect(res.status).toBe(200);
  const [full] = decodeMessages(res.body);
  return { node: full.Node as Node, peers: (full.Peers ?? []) as Node[] };
}

/** Waits until a message of the stream satisfies `match`, for at most 5 s. */
async function streamed(
  stream: ReturnType<ControlClient['stream']>,
  what: string,
  match: (m: Message) => boolean,
): Promise<Message> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = stream.messages.find(match);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not within 5 s; got ${JSON.stringify(stream.messages)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const names = (nodes: unknown) => ((nodes ?? []) as Node[]).map((n) => n.Name.split('.')[0]);

describe('device approval over the Tailscale protocol', () => {
  it('a waiting device registers unauthorized, has no peers and is seen by none until approved', async () => {
    expect((await t.server.call('PATCH', '/v1/network', { body: { deviceApproval: true } })).status).toBe(200);
    const alpha = await joined(await authKey({ preApproved: true }), 'alpha');
    expect(alpha.answer.MachineAuthorized).toBe(true);
    const beta = await joined(await authKey(), 'beta');
    expect(beta.answer.MachineAuthorized).toBe(false);

    const waiting = await mapOnce(beta.client, beta.nodeKey);
    expect(waiting.node.MachineAuthorized).toBe(false);
    expect(waiting.peers).toEqual([]);
    expect((await mapOnce(alpha.client, alpha.nodeKey)).peers).toEqual([]);

    const alphaStream = alpha.client.stream(mapRequest(alpha.nodeKey, true));
    const betaStream = beta.client.stream(mapRequest(beta.nodeKey, true));
    await alphaStream.next(1);
    await betaStream.next(1);
    const approved = await t.server.call('POST', `/v1/devices/${await deviceId('beta')}/approve`);
    expect(approved.status).toBe(200);
    expect((betaStream.messages[0].Node as Node).MachineAuthorized).toBe(false);
    await streamed(betaStream, 'beta learns it is approved', (m) => (m.Node as Node)?.MachineAuthorized === true);
    await streamed(betaStream, 'beta gets alpha', (m) => names(m.PeersChanged).includes('alpha'));
    const seen = await streamed(alphaStream, 'alpha gets beta', (m) => names(m.PeersChanged).includes('beta'));
    expect((seen.PeersChanged as Node[])[0].MachineAuthorized).toBe(true);
  });
});

describe('login expiry over the Tailscale protocol', () => {
  it('sends KeyExpiry; an expired device leaves its peers’ maps and must log in again with an auth key', async () => {
    const key = await authKey();
    const alpha = await joined(key, 'alpha');
    const beta = await joined(key, 'beta');
    const before = await mapOnce(beta.client, beta.nodeKey);
    // The network's nodeKeyExpiry (180 days by default) from the login.
    const expiry = Date.parse(before.node.KeyExpiry);
    expect(expiry - Date.now()).toBeGreaterThan(179 * 86_400_000);
    expect(before.peers.map((p) => Date.parse(p.KeyExpiry) > Date.now())).toEqual([true]);

    const alphaStream = alpha.client.stream(mapRequest(alpha.nodeKey, true));
    await alphaStream.next(1);
    const betaId = await deviceId('beta');
    expect((await t.server.call('POST', `/v1/devices/${betaId}/expire`)).status).toBe(200);
    const gone = await streamed(alphaStream, 'beta leaves alpha’s map', (m) => Array.isArray(m.PeersRemoved));
    expect(gone.PeersRemoved).toEqual([before.node.ID]);

    // Beta's own map says its key expired, with no peers.
    const expired = await mapOnce(beta.client, beta.nodeKey);
    expect(Date.parse(expired.node.KeyExpiry)).toBeLessThanOrEqual(Date.now());
    expect(expired.node.Expired).toBe(true);
    expect(expired.peers).toEqual([]);

    // Registering the expired key again: told so, upon which the client makes a new key...
    expect(await register(beta.client, { NodeKey: beta.nodeKey })).toMatchObject({ NodeKeyExpired: true });
    // ...which it may not simply rotate to: without an auth key that is a new login (a URL)...
    const renewed = nodeKey();
    const refused = await register(beta.client, { NodeKey: renewed, OldNodeKey: beta.nodeKey });
    expect(refused.MachineAuthorized).toBe(false);
    expect(refused.AuthURL).toMatch(/\/register\//);
    expect((await beta.client.post('/machine/map', mapRequest(renewed, false))).status).toBe(401);
    // ...and with one (tailscale up --force-reauth --auth-key) it logs in again as the same device.
    const again = await register(beta.client, {
      NodeKey: renewed,
      OldNodeKey: beta.nodeKey,
      Auth: { AuthKey: key },
      Hostinfo: { Hostname: 'beta', OS: 'linux' },
    });
    expect(again.MachineAuthorized).toBe(true);
    const list = await json(await t.server.call('GET', '/v1/devices?fields=all'));
    expect(list.devices.map((d: { id: string }) => d.id).sort()).toEqual([await deviceId('alpha'), betaId].sort());
    const back = await mapOnce(beta.client, renewed);
    expect(back.node.ID).toBe(before.node.ID);
    expect(Date.parse(back.node.KeyExpiry)).toBeGreaterThan(Date.now());
    expect(back.node.Expired).toBeUndefined();
    expect(names(back.peers)).toEqual(['alpha']);
    await streamed(alphaStream, 'beta is back in alpha’s map', (m) => names(m.PeersChanged).includes('beta'));
  });

  it('a device logged in with tags never expires, as in Tailscale; one tagged later keeps its expiry', async () => {
    await t.server.call('PUT', '/v1/acl', {
      headers: { 'content-type': 'application/hujson' },
      raw: '{"tagOwners":{"tag:server":["autogroup:admin"]},"acls":[{"action":"accept","src":["*"],"dst":["*:22"]}]}',
    });
    const server = await joined(await authKey({ tags: ['tag:server'] }), 'server');
    const laptop = await joined(await authKey(), 'laptop');
    expect((await mapOnce(server.client, server.nodeKey)).node.KeyExpiry).toBe(ZERO_TIME);
    expect(Date.parse((await mapOnce(laptop.client, laptop.nodeKey)).node.KeyExpiry)).toBeGreaterThan(Date.now());
    const device = async (name: string) =>
      json(await t.server.call('GET', `/v1/devices/${await deviceId(name)}`)) as Promise<Record<string, unknown>>;
    expect(await device('server')).toMatchObject({ keyExpiryDisabled: true, keyExpiry: null });
    // Tagging a device that logged in as its user does not change its expiry (Tailscale's rule too).
    const tagged = await t.server.call('POST', `/v1/devices/${await deviceId('laptop')}/tags`, {
      body: { tags: ['tag:server'] },
    });
    expect(tagged.status).toBe(200);
    expect(await device('laptop')).toMatchObject({ keyExpiryDisabled: false, keyExpiry: expect.any(String) });
  });

  it('a device whose expiry is off has no KeyExpiry, and turning it off lifts an expiry', async () => {
    const key = await authKey();
    const alpha = await joined(key, 'alpha');
    await joined(key, 'beta');
    const alphaId = await deviceId('alpha');
    expect((await t.server.call('POST', `/v1/devices/${alphaId}/expire`)).status).toBe(200);
    expect((await mapOnce(alpha.client, alpha.nodeKey)).peers).toEqual([]);
    const patched = await t.server.call('PATCH', `/v1/devices/${alphaId}`, { body: { keyExpiryDisabled: true } });
    expect(patched.status).toBe(200);
    const map = await mapOnce(alpha.client, alpha.nodeKey);
    expect(map.node.KeyExpiry).toBe(ZERO_TIME);
    expect(map.node.Expired).toBeUndefined();
    expect(names(map.peers)).toEqual(['beta']);
    expect(await register(alpha.client, { NodeKey: alpha.nodeKey })).toMatchObject({ MachineAuthorized: true });
  });

  it('a machine that logged out and logs in again with its owner’s auth key is the same device', async () => {
    const key = await authKey();
    const alpha = await joined(key, 'alpha');
    const before = await mapOnce(alpha.client, alpha.nodeKey);
    const alphaId = await deviceId('alpha');
    // tailscale logout: the node key expires (tailscaled asks for Unix time 123,
    // controlclient/direct.go), and the client forgets it...
    const out = await register(alpha.client, { NodeKey: alpha.nodeKey, Expiry: '1970-01-01T00:02:03Z' });
    expect(out).toMatchObject({ NodeKeyExpired: true });
    // The login ended: /v1 says so, and the old key logs in no more.
    expect(await json(await t.server.call('GET', `/v1/devices/${alphaId}`))).toMatchObject({ keyExpired: true });
    expect(await register(alpha.client, { NodeKey: alpha.nodeKey })).toMatchObject({ NodeKeyExpired: true });
    // ...so tailscale up --auth-key comes back with a new one and no old one.
    const renewed = nodeKey();
    const again = await register(alpha.client, {
      NodeKey: renewed,
      Auth: { AuthKey: key },
      Hostinfo: { Hostname: 'alpha', OS: 'linux' },
    });
    expect(again.MachineAuthorized).toBe(true);
    const list = await json(await t.server.call('GET', '/v1/devices?fields=all'));
    expect(list.devices.map((d: { id: string; name: string }) => [d.id, d.name])).toEqual([[alphaId, 'alpha']]);
    expect((await mapOnce(alpha.client, renewed)).node.ID).toBe(before.node.ID);
    expect(await json(await t.server.call('GET', `/v1/devices/${alphaId}`))).toMatchObject({ keyExpired: false });
    // The old node key is the device's no more.
    expect((await alpha.client.post('/machine/map', mapRequest(alpha.nodeKey, false))).status).toBe(401);
  });

  it('logging in again with --advertise-tags tags the same device, which then never expires; untagged, it does', async () => {
    await t.server.call('PUT', '/v1/acl', {
      headers: { 'content-type': 'application/hujson' },
      raw: '{"tagOwners":{"tag:server":["autogroup:admin"]},"acls":[{"action":"accept","src":["*"],"dst":["*:22"]}]}',
    });
    const key = await authKey();
    const beta = await joined(key, 'beta');
    const betaId = await deviceId('beta');
    const device = async () => json(await t.server.call('GET', `/v1/devices/${betaId}`));
    expect(await device()).toMatchObject({ tags: [], keyExpiryDisabled: false });
    // tailscale up --advertise-tags tag:server --force-reauth --auth-key …
    const tagged = nodeKey();
    const again = await register(beta.client, {
      NodeKey: tagged,
      OldNodeKey: beta.nodeKey,
      Auth: { AuthKey: key },
      Hostinfo: { Hostname: 'beta', OS: 'linux', RequestTags: ['tag:server'] },
    });
    expect(again.MachineAuthorized).toBe(true);
    const list = await json(await t.server.call('GET', '/v1/devices'));
    expect(list.devices.map((d: { id: string }) => d.id)).toEqual([betaId]);
    expect(await device()).toMatchObject({ name: 'beta', tags: ['tag:server'], keyExpiryDisabled: true });
    expect((await mapOnce(beta.client, tagged)).node.KeyExpiry).toBe(ZERO_TIME);
    // And back: the owner's login without tags makes it the owner's untagged device, expiring.
    const untagged = nodeKey();
    await register(beta.client, {
      NodeKey: untagged,
      OldNodeKey: tagged,
      Auth: { AuthKey: key },
      Hostinfo: { Hostname: 'beta', OS: 'linux' },
    });
    expect(await device()).toMatchObject({ tags: [], keyExpiryDisabled: false, keyExpiry: expect.any(String) });
  });

  it('tailscale logout ends the login of a device whose expiry is off (a tagged one) too', async () => {
    await t.server.call('PUT', '/v1/acl', {
      headers: { 'content-type': 'application/hujson' },
      raw: '{"tagOwners":{"tag:server":["autogroup:admin"]},"acls":[{"action":"accept","src":["*"],"dst":["*:22"]}]}',
    });
    const srv = await joined(await authKey({ tags: ['tag:server'] }), 'srv');
    const srvId = await deviceId('srv');
    expect(await register(srv.client, { NodeKey: srv.nodeKey, Expiry: '1970-01-01T00:02:03Z' })).toMatchObject({
      NodeKeyExpired: true,
    });
    expect(await json(await t.server.call('GET', `/v1/devices/${srvId}`))).toMatchObject({
      keyExpiryDisabled: true,
      keyExpired: true,
      online: false,
    });
    expect(await register(srv.client, { NodeKey: srv.nodeKey })).toMatchObject({ NodeKeyExpired: true });
  });

  it('tailscale up --auth-key again on a logged-in machine keeps its login, even with a spent or expired key', async () => {
    // A container's entry point runs `tailscale up --auth-key …` at every start: the client
    // registers its live node key with the key again.
    const single = await authKey({ reusable: false, expiresIn: '1h' });
    const alpha = await joined(single, 'alpha');
    const alphaId = await deviceId('alpha');
    const again = { NodeKey: alpha.nodeKey, Auth: { AuthKey: single }, Hostinfo: { Hostname: 'alpha', OS: 'linux' } };
    expect(await register(alpha.client, again)).toMatchObject({
      MachineAuthorized: true,
      User: { LoginName: 'owner@example.com' },
    });
    // Two hours on, the key has expired; the device's login has not.
    t.server.clock.advance(2 * 3_600_000);
    expect(await register(alpha.client, again)).toMatchObject({ MachineAuthorized: true });
    const list = await json(await t.server.call('GET', '/v1/devices'));
    expect(list.devices.map((d: { id: string }) => d.id)).toEqual([alphaId]);
    expect((await mapOnce(alpha.client, alpha.nodeKey)).node.MachineAuthorized).toBe(true);
    // A key the machine has no right to (unknown) is refused as ever, and so is a spent one
    // on a new node key.
    expect(await register(alpha.client, { ...again, Auth: { AuthKey: 'wrn_auth_nope' } })).toHaveProperty('Error');
    expect(await register(alpha.client, { ...again, NodeKey: nodeKey() })).toMatchObject({
      Error: expect.stringMatching(/single-use|expired/),
    });
  });

  it('tailscale up --auth-key of other tags or another user on a logged-in machine is a new login, as --force-reauth', async () => {
    await t.server.call('PUT', '/v1/acl', {
      headers: { 'content-type': 'application/hujson' },
      raw: '{"tagOwners":{"tag:server":["autogroup:admin"]},"acls":[{"action":"accept","src":["*"],"dst":["*:22"]}]}',
    });
    const alpha = await joined(await authKey(), 'alpha');
    const alphaId = await deviceId('alpha');
    const tagged = await authKey({ tags: ['tag:server'] });
    // The client keeps its node key: told it expired, it makes a new one and sends it with the
    // old one, as tailscale up --force-reauth does. The device's login is not ended by that.
    expect(
      await register(alpha.client, {
        NodeKey: alpha.nodeKey,
        Auth: { AuthKey: tagged },
        Hostinfo: { Hostname: 'alpha' },
      }),
    ).toEqual({ NodeKeyExpired: true, MachineAuthorized: false });
    expect(await json(await t.server.call('GET', `/v1/devices/${alphaId}`))).toMatchObject({
      keyExpired: false,
      tags: [],
    });
    const renewed = nodeKey();
    const again = await register(alpha.client, {
      NodeKey: renewed,
      OldNodeKey: alpha.nodeKey,
      Auth: { AuthKey: tagged },
      Hostinfo: { Hostname: 'alpha', OS: 'linux' },
    });
    expect(again).toMatchObject({ MachineAuthorized: true, User: { LoginName: 'tagged-devices' } });
    expect(await json(await t.server.call('GET', `/v1/devices/${alphaId}`))).toMatchObject({
      tags: ['tag:server'],
      keyExpiryDisabled: true,
    });

    // Another user's key: the same answer, then the machine is a new device of that user.
    const user = await json(
      await t.server.call('POST', '/v1/users', { body: { loginName: 'sam@example.com', role: 'member' } }),
    );
    const sams = await authKey({ user: user.id });
    expect(
      await register(alpha.client, { NodeKey: renewed, Auth: { AuthKey: sams }, Hostinfo: { Hostname: 'alpha' } }),
    ).toMatchObject({ NodeKeyExpired: true });
    await register(alpha.client, {
      NodeKey: nodeKey(),
      OldNodeKey: renewed,
      Auth: { AuthKey: sams },
      Hostinfo: { Hostname: 'alpha', OS: 'linux' },
    });
    const list = await json(await t.server.call('GET', '/v1/devices?fields=all'));
    expect(
      list.devices.map((d: { name: string; user?: { loginName: string } }) => [d.name, d.user?.loginName]).sort(),
    ).toEqual([
      ['alpha', 'owner@example.com'],
      ['alpha-1', 'sam@example.com'],
    ]);
  });

  it('another user’s auth key makes the machine a new device, as in Tailscale', async () => {
    const alpha = await joined(await authKey(), 'alpha');
    const user = await json(
      await t.server.call('POST', '/v1/users', {
        body: { loginName: 'sam@example.com', displayName: 'Sam', role: 'member' },
      }),
    );
    const again = await register(alpha.client, {
      NodeKey: nodeKey(),
      OldNodeKey: alpha.nodeKey,
      Auth: { AuthKey: await authKey({ user: user.id }) },
      Hostinfo: { Hostname: 'alpha', OS: 'linux' },
    });
    expect(again.MachineAuthorized).toBe(true);
    const list = await json(await t.server.call('GET', '/v1/devices'));
    expect(list.devices.map((d: { name: string }) => d.name).sort()).toEqual(['alpha', 'alpha-1']);
  });
});

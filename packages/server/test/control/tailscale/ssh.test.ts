/**
 * Tailscale SSH over real HTTP: what a Tailscale client's map must carry for `tailscale up
 * --ssh` and `tailscale ssh`. The device's own node carries the ssh capability; its SSHPolicy
 * holds the `ssh` rules naming it, and a policy change sends it to the open stream; the SSH
 * host keys a device reports reach its peers at once (their `tailscale ssh` trusts only those)
 * and show as `sshEnabled` on /api/v2.
 */
import { describe, expect, it } from 'vitest';
import { json } from '../../harness.js';
import { protocolFixture } from './fixture.js';
import { type ControlClient, decodeMessages, mapRequest } from './ts-client.js';

const CAP_SSH = 'https://tailscale.com/cap/ssh';
const HOST_KEY = `ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI${'A'.repeat(43)} root@srv`;
const t = protocolFixture();

interface MapNode {
  Name: string;
  Addresses: string[];
  Hostinfo: { sshHostKeys?: string[] };
  CapMap?: Record<string, unknown[]>;
}
interface SshPolicy {
  rules: Array<{ principals: Array<{ nodeIP: string }>; sshUsers: Record<string, string>; action: unknown }>;
}

type Device = { client: ControlClient; nodeKey: string };

async function fullMap(device: Device, hostinfo: Record<string, unknown> = { Hostname: 'x', OS: 'linux' }) {
  const res = await device.client.post('/machine/map', { ...mapRequest(device.nodeKey, false), Hostinfo: hostinfo });
  expect(res.status).toBe(200);
  return decodeMessages(res.body)[0] as { Node: MapNode; Peers: MapNode[]; SSHPolicy: SshPolicy };
}

const policy = (ssh: string) =>
  `{"tagOwners":{"tag:server":["autogroup:admin"]},"acls":[{"action":"accept","src":["*"],"dst":["*:22"]}],"ssh":${ssh}}`;

async function putPolicy(text: string): Promise<void> {
  const res = await t.server.call('PUT', '/v1/acl', { headers: { 'content-type': 'application/hujson' }, raw: text });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
}

describe('Tailscale SSH: what the map carries', () => {
  it('the SSHPolicy of the device the rules name, again on its stream when the policy changes', async () => {
    await putPolicy(
      policy(
        '[{"action":"accept","src":["autogroup:member"],"dst":["tag:server"],"users":["root","autogroup:nonroot"]}]',
      ),
    );
    const alpha = await t.joined(await t.authKey(), 'alpha');
    const srv = await t.joined(await t.authKey({ tags: ['tag:server'] }), 'srv');

    const map = await fullMap(srv);
    expect(map.Node.CapMap).toHaveProperty([CAP_SSH], []);
    const alphaNode = map.Peers.find((p) => p.Name.startsWith('alpha.'));
    expect(map.SSHPolicy.rules).toEqual([
      {
        principals: alphaNode!.Addresses.map((a) => ({ nodeIP: a.replace(/\/\d+$/, '') })),
        sshUsers: { '*': '=', root: 'root' },
        action: {
          accept: true,
          allowAgentForwarding: true,
          allowLocalPortForwarding: true,
          allowRemotePortForwarding: true,
        },
      },
    ]);
    // alpha is no rule's destination: it refuses every connection.
    expect((await fullMap(alpha)).SSHPolicy).toEqual({ rules: [] });

    const stream = srv.client.stream(mapRequest(srv.nodeKey, true));
    await stream.next(1);
    await putPolicy(policy('[]'));
    await stream.next(2);
    stream.close();
    // The peers and the filter are as they were: the delta is the SSH policy alone.
    expect(stream.messages[1]).toEqual({ Seq: expect.any(Number), SSHPolicy: { rules: [] } });
  });

  it('a device’s SSH host keys reach its peers at once, and /api/v2 shows it runs Tailscale SSH', async () => {
    await putPolicy(policy('[]'));
    const alpha = await t.joined(await t.authKey(), 'alpha');
    const srv = await t.joined(await t.authKey(), 'srv');
    const srvId = await t.deviceId('srv');
    const sshEnabled = async () =>
      (await json(await t.server.call('GET', `/api/v2/device/${srvId}?fields=all`))).sshEnabled;
    await fullMap(srv);
    expect(await sshEnabled()).toBe(false);

    const stream = alpha.client.stream(mapRequest(alpha.nodeKey, true));
    await stream.next(1);
    await fullMap(srv, { Hostname: 'srv', OS: 'linux', sshHostKeys: [HOST_KEY] });
    await stream.next(2);
    stream.close();
    const changed = stream.messages[1].PeersChanged as MapNode[];
    expect(changed.map((p) => p.Hostinfo.sshHostKeys)).toEqual([[HOST_KEY]]);
    expect(await sshEnabled()).toBe(true);

    await fullMap(srv, { Hostname: 'srv', OS: 'linux' });
    expect(await sshEnabled()).toBe(false);
  });
});

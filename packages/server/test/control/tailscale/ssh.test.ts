/**
 * Tailscale SSH over real HTTP: what a Tailscale client's map must carry for `tailscale up
 * --ssh` and `tailscale ssh`. The device's own node carries the ssh capability; its SSHPolicy
 * holds the `ssh` rules naming it, and a policy change sends it to the open stream; the SSH
 * host keys a device reports reach its peers at once (their `tailscale ssh` trusts only those)
 * and show as `sshEnabled` on /api/v2.
 */
import { describe, expect, it } from 'vitest';
import { numericId } from '../../../src/control/tailscale/tailcfg.js';
import { auditEntries } from '../../devices/helpers.js';
import { json } from '../../harness.js';
import { sshCheckSession } from './console-session.js';
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

/** A map request's answer; the Hostinfo names the device as it joined (a new hostname renames it). */
async function fullMap(device: Device, name: string, hostinfo: Record<string, unknown> = {}) {
  const res = await device.client.post('/machine/map', {
    ...mapRequest(device.nodeKey, false),
    Hostinfo: { Hostname: name, OS: 'linux', ...hostinfo },
  });
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

    const map = await fullMap(srv, 'srv');
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
    expect((await fullMap(alpha, 'alpha')).SSHPolicy).toEqual({ rules: [] });

    const stream = srv.client.stream({ ...mapRequest(srv.nodeKey, true), Hostinfo: { Hostname: 'srv', OS: 'linux' } });
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
    await fullMap(srv, 'srv');
    expect(await sshEnabled()).toBe(false);

    const stream = alpha.client.stream({
      ...mapRequest(alpha.nodeKey, true),
      Hostinfo: { Hostname: 'alpha', OS: 'linux' },
    });
    await stream.next(1);
    await fullMap(srv, 'srv', { sshHostKeys: [HOST_KEY] });
    await stream.next(2);
    stream.close();
    const changed = stream.messages[1].PeersChanged as MapNode[];
    expect(changed.map((p) => p.Hostinfo.sshHostKeys)).toEqual([[HOST_KEY]]);
    expect(await sshEnabled()).toBe(true);

    await fullMap(srv, 'srv');
    expect(await sshEnabled()).toBe(false);
  });
});

const signIn = (userId: string) => sshCheckSession(t.server, userId);

/** What the client sends over its Noise channel for a URL: its path and query. */
const pathOf = (url: string) => {
  const { pathname, search } = new URL(url);
  return `${pathname}${search}`;
};

describe('Tailscale SSH check rules', () => {
  it('hold the connection until the source’s owner confirms it in the console, then let it in for the period', async () => {
    await putPolicy(
      policy(
        '[{"action":"check","src":["autogroup:member"],"dst":["tag:server"],"users":["root"],"checkPeriod":"1h"}]',
      ),
    );
    const alpha = await t.joined(await t.authKey(), 'alpha');
    const srv = await t.joined(await t.authKey({ tags: ['tag:server'] }), 'srv');
    const map = await fullMap(srv, 'srv');
    const hold = (map.SSHPolicy.rules[0].action as { holdAndDelegate: string }).holdAndDelegate;
    // https whatever the server's scheme: the client fetches it over its Noise channel only so.
    expect(hold).toBe(
      `${t.server.url.replace('http:', 'https:')}/machine/ssh/action/${t.server.networkId}/$SRC_NODE_ID/to/$DST_NODE_ID?src_ip=$SRC_NODE_IP&local_user=$LOCAL_USER&period=3600`,
    );
    const alphaId = numericId(await t.deviceId('alpha'));
    const srvId = numericId(await t.deviceId('srv'));
    const addressOf = async (name: string) =>
      (await json(await t.server.call('GET', `/v1/devices/${await t.deviceId(name)}`))).addresses as string[];
    const [alphaV4, alphaV6] = await addressOf('alpha');
    const ask = async (device: Device, localUser: string, srcIp = alphaV4) => {
      const url = hold
        .replace('$SRC_NODE_ID', String(alphaId))
        .replace('$DST_NODE_ID', String(srvId))
        .replace('$SRC_NODE_IP', encodeURIComponent(srcIp));
      const res = await device.client.post(pathOf(url.replace('$LOCAL_USER', localUser)), {});
      return { status: res.status, action: res.status === 200 ? JSON.parse(res.body.toString()) : undefined };
    };

    // Only the destination may ask.
    expect((await ask(alpha, 'root')).status).toBe(404);
    // The source is the device at the connection's address, and only if the client's id names it.
    const [srvV4] = await addressOf('srv');
    for (const wrong of [srvV4, '100.64.99.99', 'not-an-address']) {
      expect((await ask(srv, 'root', wrong)).action).toMatchObject({ reject: true });
    }
    const first = (await ask(srv, 'root')).action;
    const checkUrl = /visit: (\S+)/.exec(first.message)?.[1];
    expect(checkUrl).toMatch(new RegExp(`^${t.server.url}/ssh-check/[A-Za-z0-9_-]+$`));
    expect(first.holdAndDelegate).toMatch(new RegExp(`^${t.server.url.replace('http:', 'https:')}/machine/ssh/check/`));
    const held = srv.client.post(pathOf(first.holdAndDelegate), {});

    // Another user signed in sees who may confirm, and cannot.
    const other = await t.server.call('POST', '/v1/users', { body: { loginName: 'sam@example.com', role: 'admin' } });
    const sam = await signIn((await json(other)).id);
    const seen = await sam.view(checkUrl!);
    expect(seen).toMatchObject({ state: 'pending', localUser: 'root', periodSeconds: 3600, mayApprove: false });
    expect(seen.source.name).toBe('alpha');
    expect(seen.destination.name).toBe('srv');
    expect((await sam.approve(checkUrl!)).status).toBe(409);

    const ownerId = (await json(await t.server.call('GET', '/v1/users?role=owner'))).users[0].id;
    const owner = await signIn(ownerId);
    expect((await owner.view(checkUrl!)).mayApprove).toBe(true);
    expect((await owner.approve(checkUrl!)).status).toBe(200);
    const answer = await held;
    expect(JSON.parse(answer.body.toString())).toEqual({
      accept: true,
      allowAgentForwarding: true,
      allowLocalPortForwarding: true,
      allowRemotePortForwarding: true,
    });
    expect((await owner.view(checkUrl!)).state).toBe('approved');
    expect((await owner.approve(checkUrl!)).status).toBe(409);

    // The confirmation is audited: who, from which device to which, as whom, for how long.
    const srvDevice = await t.deviceId('srv');
    const alphaDevice = await t.deviceId('alpha');
    const entries = await auditEntries(t.server);
    const confirmed = entries.filter((e) => e.action === 'ssh_check.approve');
    expect(confirmed).toEqual([
      expect.objectContaining({
        method: 'POST',
        status: 200,
        userId: ownerId,
        target: `${alphaDevice} -> ${srvDevice} as root for 3600s`,
      }),
    ]);
    // The refusals (not the owner, already used) are recorded as refused calls, changing nothing.
    const refused = entries.filter((e) => e.path.endsWith('/approve') && e.status === 409);
    expect(refused.map((e) => e.action)).toEqual([null, null]);

    // Within the period the same source, destination and user are let in at once; another user asks again.
    expect((await ask(srv, 'root')).action).toMatchObject({ accept: true });
    expect((await ask(srv, 'root', alphaV6)).action).toMatchObject({ accept: true });
    expect((await ask(srv, 'deploy')).action.holdAndDelegate).toBeDefined();
  });

  it('come first in the SSHPolicy, before accept rules', async () => {
    await putPolicy(
      policy(`[
        {"action":"accept","src":["autogroup:member"],"dst":["tag:server"],"users":["deploy"]},
        {"action":"check","src":["autogroup:member"],"dst":["tag:server"],"users":["root"]}
      ]`),
    );
    await t.joined(await t.authKey(), 'alpha');
    const srv = await t.joined(await t.authKey({ tags: ['tag:server'] }), 'srv');
    const rules = (await fullMap(srv, 'srv')).SSHPolicy.rules;
    expect(rules.map((r) => Object.keys(r.action as object))).toEqual([
      ['holdAndDelegate'],
      ['accept', 'allowAgentForwarding', 'allowLocalPortForwarding', 'allowRemotePortForwarding'],
    ]);
  });
});

/**
 * The official Tailscale client (tailscaled v1.102.5) against Warren: each check of the
 * end-to-end suite as its own test, in order, on one server and three clients.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  type Client,
  connects,
  joinNetwork,
  peers,
  SERVER_URL,
  startClient,
  startWarren,
  stopAll,
  until,
  type Warren,
} from './harness.ts';

const DOMAIN = 'default.warren.internal';
const ALLOWED = 7001;
const DENIED = 7002;

/** A policy opening one port between every device, and tag:web for the tags check. */
const policyOpening = (port: number) => `{
  "tagOwners": { "tag:web": ["autogroup:admin"] },
  "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:${port}"] }],
}`;

let warren: Warren;
const clients: Client[] = [];
const listeners: Server[] = [];
let reusableKey: string;

async function authKey(body: Record<string, unknown> = {}): Promise<string> {
  const res = await warren.call('POST', '/v1/keys', { type: 'auth', reusable: true, expiresIn: '1h', ...body });
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body.key;
}

async function devices(): Promise<
  Array<{ id: string; name: string; addresses?: string[]; tags: string[]; protocol?: string; dnsName?: string }>
> {
  const res = await warren.call('GET', '/v1/devices?fields=all');
  assert.equal(res.status, 200);
  return res.body.devices;
}

async function deviceNamed(name: string) {
  const device = (await devices()).find((d) => d.name === name);
  assert.ok(device, `device ${name} is listed`);
  return device;
}

async function putPolicy(text: string): Promise<void> {
  const res = await warren.call('PUT', '/v1/acl', text, 'application/hujson');
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

const address = async (name: string) => (await deviceNamed(name)).addresses![0];

before(async () => {
  for (const port of [ALLOWED, DENIED]) {
    const server = createServer((socket) => socket.end(`port ${port}\n`));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    listeners.push(server);
  }
  warren = await startWarren();
  await putPolicy(policyOpening(ALLOWED));
  reusableKey = await authKey();
  for (const name of ['alpha', 'beta', 'gamma']) clients.push(await startClient(name));
});

after(() => {
  stopAll();
  for (const l of listeners) l.close();
});

describe('the Tailscale client on Warren', { concurrency: false }, () => {
  it('three clients join with an auth key and see each other with Warren addresses and names', async () => {
    await Promise.all(clients.map((c) => joinNetwork(c, reusableKey)));
    const listed = await devices();
    for (const client of clients) {
      const device = listed.find((d) => d.name === client.name);
      assert.ok(device, `${client.name} is listed in /v1/devices`);
      assert.equal(device.protocol, 'tailscale');
      assert.equal(device.dnsName, `${client.name}.${DOMAIN}`);
      const status = await until(`${client.name} sees two peers`, 20_000, async () => {
        const s = await client.status();
        return s.BackendState === 'Running' && peers(s).length === 2 ? s : undefined;
      });
      assert.deepEqual(status.Self.TailscaleIPs, device.addresses);
      assert.equal(status.Self.DNSName, `${client.name}.${DOMAIN}.`);
      const names = peers(status)
        .map((p) => p.DNSName)
        .sort();
      const others = clients.filter((c) => c !== client).map((c) => `${c.name}.${DOMAIN}.`);
      assert.deepEqual(names, others.sort());
    }
  });

  it('tailscale ping reaches a peer; the embedded relay is the home relay', async () => {
    const [alpha] = clients;
    await until('alpha has the embedded relay as its home relay', 30_000, async () =>
      (await alpha.status()).Self.Relay === 'warren' ? true : undefined,
    );
    await until('alpha pings beta', 30_000, async () => {
      const res = await alpha.cli(['ping', '--c=3', '--timeout=3s', 'beta'], 15_000);
      return res.code === 0 && /pong from beta/.test(res.stdout) ? true : undefined;
    });
  });

  it('the packet filter from the policy: the allowed port connects, the denied one does not', async () => {
    const [alpha] = clients;
    const beta = await address('beta');
    await until('alpha reaches beta on the allowed port', 20_000, async () =>
      (await connects(alpha, beta, ALLOWED)) ? true : undefined,
    );
    assert.equal(await connects(alpha, beta, DENIED), false, 'the denied port must not connect');
  });

  it('a policy change through /v1/acl flips that within 2 s', async () => {
    const [alpha] = clients;
    const beta = await address('beta');
    await putPolicy(policyOpening(DENIED));
    const changed = Date.now();
    await until('the formerly denied port opens', 2_000, async () =>
      (await connects(alpha, beta, DENIED, 1_000)) ? true : undefined,
    );
    assert.ok(Date.now() - changed <= 2_000 + 1_000);
    assert.equal(await connects(alpha, beta, ALLOWED), false, 'the formerly allowed port is closed');
    await putPolicy(policyOpening(ALLOWED));
  });

  it('an advertised route is pending in /v1/routes; approved, it is in the peer’s AllowedIPs', async () => {
    const [alpha, , gamma] = clients;
    const set = await gamma.cli(['set', '--advertise-routes=10.9.0.0/24']);
    assert.equal(set.code, 0, set.stderr);
    const route = await until('the route is pending', 10_000, async () => {
      const res = await warren.call('GET', '/v1/routes');
      return res.body.routes.find(
        (r: { prefix: string; state: string }) => r.prefix === '10.9.0.0/24' && r.state === 'pending',
      );
    });
    const gammaPeerHasRoute = async () => {
      const s = await alpha.status();
      return peers(s)
        .find((p) => p.HostName === 'gamma')
        ?.AllowedIPs?.includes('10.9.0.0/24');
    };
    assert.equal(await gammaPeerHasRoute(), false, 'a pending route reaches no peer');
    const approved = await warren.call('POST', `/v1/routes/${route.id}/approve`);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    await until('alpha has the route in gamma’s AllowedIPs', 10_000, async () =>
      (await gammaPeerHasRoute()) ? true : undefined,
    );
  });

  it('tags set through /v1 appear in the client’s status', async () => {
    const [, beta] = clients;
    const device = await deviceNamed('beta');
    const res = await warren.call('POST', `/v1/devices/${device.id}/tags`, { tags: ['tag:web'] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await until('beta sees its tag', 10_000, async () =>
      (await beta.status()).Self.Tags?.includes('tag:web') ? true : undefined,
    );
  });

  it('deleting a device through /v1 disconnects it', async () => {
    const [alpha, , gamma] = clients;
    const device = await deviceNamed('gamma');
    const res = await warren.call('DELETE', `/v1/devices/${device.id}`);
    assert.equal(res.status, 204);
    await until('alpha no longer has gamma', 10_000, async () =>
      peers(await alpha.status()).some((p) => p.HostName === 'gamma') ? undefined : true,
    );
    await until('gamma has no peers left', 10_000, async () =>
      peers(await gamma.status()).length === 0 ? true : undefined,
    );
  });

  it('an ephemeral device is gone after tailscale logout', async () => {
    const [, , gamma] = clients;
    await gamma.cli(['logout'], 15_000);
    await joinNetwork(gamma, await authKey({ ephemeral: true }), ['--force-reauth']);
    await deviceNamed('gamma');
    const out = await gamma.cli(['logout'], 15_000);
    assert.equal(out.code, 0, out.stderr);
    await until('gamma is no longer listed', 10_000, async () =>
      (await devices()).some((d) => d.name === 'gamma') ? undefined : true,
    );
  });

  it('a suspended user’s device loses its peers', async () => {
    const [alpha, , gamma] = clients;
    const user = await warren.call('POST', '/v1/users', {
      loginName: 'sam@example.com',
      displayName: 'Sam',
      role: 'member',
    });
    assert.equal(user.status, 201, JSON.stringify(user.body));
    await joinNetwork(gamma, await authKey({ user: user.body.id }), ['--force-reauth']);
    await until('gamma sees peers', 15_000, async () => (peers(await gamma.status()).length > 0 ? true : undefined));
    const suspended = await warren.call('PATCH', `/v1/users/${user.body.id}`, { status: 'suspended' });
    assert.equal(suspended.status, 200, JSON.stringify(suspended.body));
    await until('gamma has no peers left', 10_000, async () =>
      peers(await gamma.status()).length === 0 ? true : undefined,
    );
    await until('alpha sees gamma offline', 10_000, async () =>
      peers(await alpha.status()).find((p) => p.HostName === 'gamma')?.Online === false ? true : undefined,
    );
  });

  it('device approval: a new client has no peers until approved through /v1, then pings its peer', async () => {
    const [alpha] = clients;
    const on = await warren.call('PATCH', '/v1/network', { deviceApproval: true });
    assert.equal(on.status, 200, JSON.stringify(on.body));
    const delta = await startClient('delta');
    clients.push(delta);
    // `tailscale up` waits while the device waits for approval.
    const up = delta.cli(
      ['up', `--login-server=${SERVER_URL}`, `--auth-key=${reusableKey}`, '--hostname=delta', '--timeout=60s'],
      70_000,
    );
    await until('delta waits for approval', 20_000, async () =>
      (await delta.status()).BackendState === 'NeedsMachineAuth' ? true : undefined,
    );
    const device = await deviceNamed('delta');
    assert.equal((device as { authorized?: boolean }).authorized, false);
    assert.equal(peers(await delta.status()).length, 0, 'a waiting device has no peers');
    assert.ok(!peers(await alpha.status()).some((p) => p.HostName === 'delta'), 'no one sees a waiting device');

    const approved = await warren.call('POST', `/v1/devices/${device.id}/approve`);
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const done = await up;
    assert.equal(done.code, 0, done.stderr);
    await until('delta pings alpha', 30_000, async () => {
      const res = await delta.cli(['ping', '--c=3', '--timeout=3s', 'alpha'], 15_000);
      return res.code === 0 && /pong from alpha/.test(res.stdout) ? true : undefined;
    });
    const off = await warren.call('PATCH', '/v1/network', { deviceApproval: false });
    assert.equal(off.status, 200, JSON.stringify(off.body));
  });

  it('an expired key is refused until the client logs in again with a new auth key', async () => {
    const [alpha] = clients;
    const delta = clients.find((c) => c.name === 'delta');
    assert.ok(delta, 'delta joined in the approval test');
    const device = await deviceNamed('delta');
    const expired = await warren.call('POST', `/v1/devices/${device.id}/expire`);
    assert.equal(expired.status, 200, JSON.stringify(expired.body));
    await until('delta is told to log in again', 15_000, async () =>
      (await delta.status()).BackendState === 'NeedsLogin' ? true : undefined,
    );
    await until('alpha no longer has delta', 10_000, async () =>
      peers(await alpha.status()).some((p) => p.HostName === 'delta') ? undefined : true,
    );
    // Without an auth key the expired login is not renewed.
    const plain = await delta.cli(['up', `--login-server=${SERVER_URL}`, '--hostname=delta', '--timeout=5s'], 15_000);
    assert.notEqual(plain.code, 0, 'tailscale up without an auth key must not renew an expired login');
    assert.equal((await delta.status()).BackendState === 'Running', false);

    await joinNetwork(delta, await authKey(), ['--force-reauth']);
    const again = await deviceNamed('delta');
    assert.equal(again.id, device.id, 'logging in again keeps the device');
    await until('alpha has delta again', 15_000, async () =>
      peers(await alpha.status()).some((p) => p.HostName === 'delta') ? true : undefined,
    );
    await until('delta pings alpha again', 30_000, async () => {
      const res = await delta.cli(['ping', '--c=3', '--timeout=3s', 'alpha'], 15_000);
      return res.code === 0 && /pong from alpha/.test(res.stdout) ? true : undefined;
    });
  });
});

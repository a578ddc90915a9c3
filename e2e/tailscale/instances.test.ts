/**
 * Two `warren serve` on one PostgreSQL database, with the official tailscaled connected to
 * each: a policy change made through one instance reaches the client of the other within 2 s,
 * and a client whose instance dies reconnects to the other and keeps its peers, then follows
 * changes made there. The first client reaches its instance through a TCP proxy the test
 * controls, which stands for a load balancer taking a dead instance out of rotation.
 * Runs when WARREN_E2E_POSTGRES_URL is set (netns.sh starts a private cluster for it).
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Client, joinNetwork, peers, startClient, startWarren, stopAll, until, type Warren } from './harness.ts';

const POSTGRES = process.env.WARREN_E2E_POSTGRES_URL ?? '';
const PROXY_PORT = 8090;

const open = `{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:7001"] }] }`;
/** Nobody reaches anybody: every client's peer list empties. */
const closed = `{ "acls": [] }`;

/** A TCP proxy to one instance at a time; `switchTo` cuts what it carried, as a balancer's failover does. */
function tcpProxy(port: number, target: number): { switchTo(port: number): void; close(): void } {
  let to = target;
  const carried = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    const outbound = tcpConnect(to, '127.0.0.1');
    carried.add(inbound).add(outbound);
    const drop = () => {
      inbound.destroy();
      outbound.destroy();
      carried.delete(inbound);
      carried.delete(outbound);
    };
    inbound.pipe(outbound).pipe(inbound);
    inbound.on('error', drop).on('close', drop);
    outbound.on('error', drop).on('close', drop);
  });
  server.listen(port, '127.0.0.1');
  return {
    switchTo(port) {
      to = port;
      for (const socket of carried) socket.destroy();
    },
    close() {
      for (const socket of carried) socket.destroy();
      server.close();
    },
  };
}

describe('two instances on one PostgreSQL database', {
  skip: POSTGRES === '' && 'WARREN_E2E_POSTGRES_URL is not set',
}, () => {
  let a: Warren;
  let b: Warren;
  let proxy: ReturnType<typeof tcpProxy>;
  let onA: Client;
  let onB: Client;

  const putPolicy = async (through: Warren, text: string) => {
    const res = await through.call('PUT', '/v1/acl', text, 'application/hujson');
    assert.equal(res.status, 200, JSON.stringify(res.body));
  };
  const peerNames = async (client: Client) => peers(await client.status()).map((p) => p.HostName);

  before(async () => {
    // Each with its own relay (tailscaled reaches Running only with a live relay); STUN off, as
    // two instances on one host cannot share its port.
    a = await startWarren({ db: POSTGRES, port: 8081, stun: false });
    b = await startWarren({ db: POSTGRES, port: 8082, stun: false, apiKey: a.apiKey });
    proxy = tcpProxy(PROXY_PORT, 8081);
    const key = await a.call('POST', '/v1/keys', { type: 'auth', reusable: true, expiresIn: '1h' });
    assert.equal(key.status, 201, JSON.stringify(key.body));
    await putPolicy(a, open);
    [onA, onB] = await Promise.all([startClient('on-a'), startClient('on-b')]);
    await joinNetwork(onA, key.body.key, [], `http://127.0.0.1:${PROXY_PORT}`);
    await joinNetwork(onB, key.body.key, [], b.url);
  });
  after(() => {
    proxy?.close();
    stopAll();
  });

  it('serves the same Noise key from both instances', async () => {
    const keys = await Promise.all(
      [a, b].map(async (w) => ((await (await fetch(`${w.url}/key?v=142`)).json()) as { publicKey: string }).publicKey),
    );
    assert.equal(keys[0], keys[1]);
  });

  it('each client sees the other, whichever instance it is connected to', async () => {
    await until('on-a sees on-b', 30_000, async () => ((await peerNames(onA)).includes('on-b') ? true : undefined));
    await until('on-b sees on-a', 30_000, async () => ((await peerNames(onB)).includes('on-a') ? true : undefined));
  });

  it('a policy change through instance A reaches the client on instance B within 2 s', async () => {
    await putPolicy(a, closed);
    await until('on-b loses its peer', 2_000, async () => ((await peerNames(onB)).length === 0 ? true : undefined));
    await putPolicy(a, open);
    await until('on-b sees on-a again', 2_000, async () =>
      (await peerNames(onB)).includes('on-a') ? true : undefined,
    );
  });

  it('a client whose instance dies reconnects to the other, keeps its peers and follows changes there', async () => {
    await until('on-a sees on-b', 10_000, async () => ((await peerNames(onA)).includes('on-b') ? true : undefined));
    a.child.kill('SIGKILL');
    proxy.switchTo(8082);
    // Reconnected through the proxy to B: the full map there still holds its peer, online.
    await until('on-a is served by B', 60_000, async () => {
      const status = await onA.status();
      const peer = peers(status).find((p) => p.HostName === 'on-b');
      return status.BackendState === 'Running' && peer?.Online ? true : undefined;
    });
    // Deltas from B: a policy change made there reaches it.
    await putPolicy(b, closed);
    await until('on-a loses its peer through B', 10_000, async () =>
      (await peerNames(onA)).length === 0 ? true : undefined,
    );
    await putPolicy(b, open);
    await until('on-a sees on-b again through B', 10_000, async () =>
      (await peerNames(onA)).includes('on-b') ? true : undefined,
    );
  });
});

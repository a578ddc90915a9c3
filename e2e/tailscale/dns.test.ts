/**
 * Split DNS and extra records (`dns.splitDns`, `dns.extraRecords` of PATCH /v1/network) as the
 * official tailscaled v1.102.5 takes them: `tailscale dns status` lists the split route and the
 * records, and `tailscale dns query` answers the records from the client's own resolver
 * (100.100.100.100), so no query leaves the namespace. A domain with an empty route is answered
 * by the client itself: a name under it without a record is NXDOMAIN, not forwarded.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Client, joinNetwork, startClient, startWarren, stopAll, until, type Warren } from './harness.ts';

let warren: Warren;
let client: Client;

/** `tailscale dns query --json`: the response code and each answer's type and value. */
async function query(
  name: string,
  type = 'A',
): Promise<{ ResponseCode: string; Answers?: { Type: string; Body: string }[] }> {
  const res = await client.cli(['dns', 'query', '--json', name, type]);
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
}

before(async () => {
  warren = await startWarren();
  const key = await warren.call('POST', '/v1/keys', { type: 'auth', reusable: true, expiresIn: '1h' });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  client = await startClient('dns-laptop');
  await joinNetwork(client, key.body.key);
});

after(() => stopAll());

describe('split DNS and extra records on the Tailscale client', { concurrency: false }, () => {
  it('a connected client shows the split routes and answers the records itself', async () => {
    const res = await warren.call('PATCH', '/v1/network', {
      dns: {
        splitDns: { 'corp.example': ['10.0.0.53', 'fd00::53'], 'lab.corp.example': [] },
        extraRecords: [
          { name: 'grafana.lab.corp.example', type: 'A', value: '100.64.0.10' },
          { name: 'grafana.lab.corp.example', type: 'AAAA', value: 'fd7a:115c:a1e0::a' },
          { name: 'wiki.example.net', type: 'A', value: '100.64.0.11' },
        ],
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));

    const status = await until('tailscale dns status lists the split route', 10_000, async () => {
      const out = await client.cli(['dns', 'status', '--all']);
      return /corp\.example\s+-> 10\.0\.0\.53/.test(out.stdout) ? out.stdout : undefined;
    });
    assert.match(status, /corp\.example\s+-> fd00::53/);
    assert.match(status, /\[A\] grafana\.lab\.corp\.example\s+-> 100\.64\.0\.10/);
    assert.match(status, /\[AAAA\] grafana\.lab\.corp\.example\s+-> fd7a:115c:a1e0::a/);
    // The route with no resolvers is the client's own, not one it forwards to.
    assert.doesNotMatch(status, /- lab\.corp\.example\s+->/);

    const a = await query('grafana.lab.corp.example');
    assert.equal(a.ResponseCode, 'RCodeSuccess', JSON.stringify(a));
    assert.deepEqual(
      a.Answers?.map((answer) => [answer.Type, answer.Body]),
      [['TypeA', '100.64.0.10']],
    );
    const aaaa = await query('grafana.lab.corp.example', 'AAAA');
    assert.deepEqual(
      aaaa.Answers?.map((answer) => [answer.Type, answer.Body]),
      [['TypeAAAA', 'fd7a:115c:a1e0::a']],
    );
    // A record outside every split domain is answered all the same.
    const wiki = await query('wiki.example.net');
    assert.deepEqual(
      wiki.Answers?.map((answer) => answer.Body),
      ['100.64.0.11'],
    );
    const missing = await query('missing.lab.corp.example');
    assert.equal(missing.ResponseCode, 'RCodeNameError', JSON.stringify(missing));
  });

  it('emptied, they leave the client', async () => {
    const res = await warren.call('PATCH', '/v1/network', { dns: { splitDns: {}, extraRecords: [] } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    await until('tailscale dns status lists no split route', 10_000, async () => {
      const out = await client.cli(['dns', 'status', '--all']);
      return out.stdout.includes('no routes configured') && out.stdout.includes('no extra records') ? true : undefined;
    });
  });
});

/**
 * A Tailscale SSH check across two instances over one database, as behind a balancer: the
 * destination's client asks and waits on one instance while the source's owner confirms on the
 * other. The held connection must proceed when the confirmation commits there, and the
 * confirmation must let the same session in at once on either instance for the rule's period:
 * all of it reaches the waiting instance only through the database (rows and, on PostgreSQL,
 * NOTIFY).
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';
import { numericId } from '../../../src/control/tailscale/tailcfg.js';
import { json, type SecondInstance, secondInstance, startServer, type TestServer } from '../../harness.js';
import { sshCheckSession } from './console-session.js';
import { type ControlClient, controlClient, registerWithKey } from './ts-client.js';

let server: TestServer;
let other: SecondInstance;
const clients: ControlClient[] = [];

beforeEach(async () => {
  server = await startServer();
  other = await secondInstance(server, { publicUrl: server.url });
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await other.close();
  await server.close();
});

async function authKey(body: Record<string, unknown> = {}): Promise<string> {
  const res = await server.call('POST', '/v1/keys', { body: { type: 'auth', reusable: true, ...body } });
  expect(res.status).toBe(201);
  return (await json(res)).key;
}

async function device(name: string) {
  const list = await json(await server.call('GET', '/v1/devices?fields=all'));
  return list.devices.find((d: { name: string }) => d.name === name) as { id: string; addresses: string[] };
}

it('a check confirmed on one instance lets the connection held on the other proceed, then in at once on both', {
  timeout: 60_000,
}, async () => {
  const policy = `{"tagOwners":{"tag:server":["autogroup:admin"]},"acls":[{"action":"accept","src":["*"],"dst":["*:22"]}],
    "ssh":[{"action":"check","src":["autogroup:member"],"dst":["tag:server"],"users":["root"],"checkPeriod":"1h"}]}`;
  const put = await server.call('PUT', '/v1/acl', { headers: { 'content-type': 'application/hujson' }, raw: policy });
  expect(put.status).toBe(200);

  const alphaClient = await controlClient(server.url);
  clients.push(alphaClient);
  await registerWithKey(alphaClient, await authKey(), 'alpha');
  // The destination's machine, with a Noise channel to each instance.
  const machine = x25519Generate();
  const here = await controlClient(server.url, machine);
  const there = await controlClient(other.url, machine);
  clients.push(here, there);
  await registerWithKey(here, await authKey({ tags: ['tag:server'] }), 'srv');
  const alpha = await device('alpha');
  const srv = await device('srv');
  const actionPath = `/machine/ssh/action/${server.networkId}/${numericId(alpha.id)}/to/${numericId(srv.id)}?src_ip=${alpha.addresses[0]}&local_user=root&period=3600`;
  const ask = async (client: ControlClient) => JSON.parse((await client.post(actionPath, {})).body.toString());

  const first = await ask(there);
  const checkUrl = /visit: (\S+)/.exec(first.message)?.[1];
  expect(checkUrl).toMatch(new RegExp(`^${server.url}/ssh-check/`));
  const { pathname, search } = new URL(first.holdAndDelegate);
  const held = there.post(`${pathname}${search}`, {});

  const ownerId = (await json(await server.call('GET', '/v1/users?role=owner'))).users[0].id;
  const owner = await sshCheckSession(server, ownerId);
  expect((await owner.approve(checkUrl!)).status).toBe(200);
  expect(JSON.parse((await held).body.toString())).toMatchObject({ accept: true });

  // The confirmation holds for the period on both instances; past it, each asks again.
  expect(await ask(there)).toMatchObject({ accept: true });
  expect(await ask(here)).toMatchObject({ accept: true });
  server.clock.advance(61 * 60_000);
  expect((await ask(there)).holdAndDelegate).toBeDefined();
});

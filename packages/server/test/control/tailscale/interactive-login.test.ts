/**
 * `tailscale up` without an auth key, over the real protocol (Noise, HTTP/2) and real console
 * sessions: the login URL, the follow-up that waits, approval by a signed-in person, the URL
 * that works once and for 15 minutes, and who may log in machines for whom (the role table).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { x25519Generate } from '../../../src/control/tailscale/noise-crypto.js';
import { hashSecret } from '../../../src/lib/secrets.js';
import { applyPolicy } from '../../acl/helpers.js';
import { auditEntries, expectProblem, listDevices } from '../../devices/helpers.js';
import { eventPage } from '../../events/helpers.js';
import { backend, json, startServer, type TestServer } from '../../harness.js';
import { instanceProcess } from '../../instance-process.js';
import { consoleSession } from './console-session.js';
import { type ControlClient, controlClient, nodeKey } from './ts-client.js';

let server: TestServer;
const clients: ControlClient[] = [];

beforeEach(async () => {
  server = await startServer();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server.close();
});

async function addUser(loginName: string, role: string): Promise<string> {
  const res = await server.call('POST', '/v1/users', { body: { loginName, role } });
  expect(res.status).toBe(201);
  return (await json(res)).id;
}

async function ownerId(): Promise<string> {
  const users = await json(await server.call('GET', '/v1/users?role=owner'));
  return users.users[0].id;
}

/** A person signed in through a one-time link, calling the console's login endpoints. */
const signIn = (userId: string) => consoleSession(server, userId);

/** A machine running `tailscale up` without a key: its first register answer and its keys. */
async function machine(hostinfo: Record<string, unknown> = {}) {
  const client = await controlClient(server.url);
  clients.push(client);
  const nk = nodeKey();
  const request = { NodeKey: nk, Hostinfo: { Hostname: 'laptop', OS: 'linux', IPNVersion: '1.102.5', ...hostinfo } };
  const res = await client.post('/machine/register', request);
  expect(res.status).toBe(200);
  const answer = JSON.parse(res.body.toString());
  const followup = (url: string = answer.AuthURL) =>
    client.post('/machine/register', { ...request, Followup: url }).then((r) => JSON.parse(r.body.toString()));
  return { client, nodeKey: nk, answer, authUrl: answer.AuthURL as string, followup };
}

/** A machine the owner logged in through its URL: the machine, the owner's session, the device. */
async function ownersMachine() {
  const m = await machine();
  const waiting = m.followup();
  const owner = await signIn(await ownerId());
  const { deviceId } = await json(await owner.approve(m.authUrl));
  await waiting;
  return { m, owner, deviceId: deviceId as string };
}

const settled = <T>(promise: Promise<T>, ms: number) =>
  Promise.race([promise.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);

describe('interactive login', () => {
  it('gives a single-use URL on the public address, stored hashed, and the waiting client proceeds once approved', async () => {
    const m = await machine();
    expect(m.answer).toMatchObject({ MachineAuthorized: false });
    expect(m.authUrl).toMatch(new RegExp(`^${server.url}/register/[A-Za-z0-9_-]{43}$`));
    const token = m.authUrl.split('/').pop()!;
    const rows = await server.database.storage.db.selectFrom('machine_logins').selectAll().execute();
    expect(rows.map((r) => r.token_hash)).toEqual([hashSecret(token)]);
    expect(JSON.stringify(rows)).not.toContain(token);

    // The follow-up waits: nothing answers it before someone approves.
    const waiting = m.followup();
    expect(await settled(waiting, 400)).toBe(false);

    const ana = await addUser('ana@example.com', 'member');
    const person = await signIn(ana);
    const view = await person.view(m.authUrl);
    expect(view.status).toBe(200);
    expect(await json(view)).toMatchObject({
      state: 'pending',
      hostname: 'laptop',
      os: 'linux',
      clientVersion: '1.102.5',
      nodeKey: m.nodeKey,
      mayChooseUser: false,
    });
    const approved = await person.approve(m.authUrl);
    expect(approved.status, await approved.clone().text()).toBe(201);
    const { deviceId } = await json(approved);

    const answer = await waiting;
    expect(answer).toMatchObject({ MachineAuthorized: true, Login: { LoginName: 'ana@example.com' } });
    const [device] = await listDevices(server, `?user=${ana}`);
    expect(device).toMatchObject({ id: deviceId, hostname: 'laptop', authorized: true });
    expect(await json(await server.call('GET', `/v1/devices/${deviceId}`))).toMatchObject({ protocol: 'tailscale' });

    const entry = (await auditEntries(server)).find((e) => e.action === 'device.enroll');
    expect(entry).toMatchObject({ target: deviceId, userId: ana, userLogin: 'ana@example.com' });
    const events = await eventPage(server, '?since=1d&type=device.created');
    expect(events.entries.map((e) => e.data.device.id)).toContain(deviceId);

    // Used: the URL says so and approves nothing more; a restarted client is let in by its key.
    expect(await json(await person.view(m.authUrl))).toMatchObject({ state: 'approved', deviceId });
    await expectProblem(await person.approve(m.authUrl), 409, 'invalid_state');
    const again = await m.client.post('/machine/register', { NodeKey: m.nodeKey });
    expect(JSON.parse(again.body.toString())).toMatchObject({ MachineAuthorized: true });
  });

  it('wakes a follow-up held by another instance as soon as the login ends there, approved or refused', {
    timeout: 60_000,
  }, async () => {
    const other = await instanceProcess(server);
    try {
      await applyPolicy(server, JSON.stringify({ tagOwners: { 'tag:prod': ['autogroup:admin'] }, acls: [] }));
      const owner = await signIn(await ownerId());
      const member = await signIn(await addUser('ana@example.com', 'member'));
      /**
       * A machine whose login starts on this instance (whose public URL the link names) and
       * whose follow-up lands on the other one, as a balancer may send it; `end` approves or
       * refuses it here. Resolves with the follow-up's answer and how long it waited.
       */
      const loginAcross = async (hostinfo: Record<string, unknown>, end: (url: string) => Promise<void>) => {
        const machineKey = x25519Generate();
        const here = await controlClient(server.url, machineKey);
        const there = await controlClient(other.url, machineKey);
        clients.push(here, there);
        const request = { NodeKey: nodeKey(), Hostinfo: { Hostname: 'laptop', OS: 'linux', ...hostinfo } };
        const { AuthURL } = JSON.parse((await here.post('/machine/register', request)).body.toString());
        const sent = Date.now();
        const waiting = there
          .post('/machine/register', { ...request, Followup: AuthURL })
          .then((r) => ({ answer: JSON.parse(r.body.toString()), waited: Date.now() - sent }));
        expect(await settled(waiting, 300)).toBe(false);
        await end(AuthURL);
        return waiting;
      };

      const approved = await loginAcross({}, async (url) => {
        expect((await owner.approve(url)).status).toBe(201);
      });
      expect(approved.answer).toMatchObject({ MachineAuthorized: true, Login: { LoginName: 'owner@example.com' } });
      // A refusal enrolls nothing and moves no network: only the login's own signal tells it.
      const refused = await loginAcross({ RequestTags: ['tag:prod'] }, async (url) => {
        await expectProblem(await member.approve(url), 409, 'invalid_state');
      });
      expect(refused.answer.Error).toContain('tag:prod');
      // PostgreSQL's NOTIFY reaches the other instance at the commit: the client proceeds well
      // before the first look at its login's row that a waiter used to make after 3 s. (On
      // SQLite, a second process's commit is seen by the once-a-second check of the file's
      // commit counter.)
      if (backend === 'postgres') {
        expect(approved.waited).toBeLessThan(2_500);
        expect(refused.waited).toBeLessThan(2_500);
      }
    } finally {
      // The other instance closes once the channels it holds are gone.
      for (const c of clients.splice(0)) c.close();
      await other.close();
    }
  });

  it('expires after 15 minutes: the page says so, approval is refused, the client gets a new URL', async () => {
    const m = await machine();
    const person = await signIn(await ownerId());
    server.clock.advance(15 * 60_000);
    expect(await json(await person.view(m.authUrl))).toMatchObject({ state: 'expired' });
    const refused = await expectProblem(await person.approve(m.authUrl), 409, 'invalid_state');
    expect(refused.detail).toContain('expired');
    const answer = await m.followup();
    expect(answer.AuthURL).toMatch(/\/register\//);
    expect(answer.AuthURL).not.toBe(m.authUrl);
    expect(await listDevices(server)).toEqual([]);
  });

  it('answers an unknown URL with 404 and needs a signed-in session with its CSRF token', async () => {
    const m = await machine();
    const person = await signIn(await ownerId());
    await expectProblem(await person.view(`${server.url}/register/${'A'.repeat(43)}`), 404, 'not_found');
    const path = new URL(m.authUrl).pathname;
    await expectProblem(await fetch(`${server.url}/auth${path}`), 401, 'unauthenticated');
    await expectProblem(await fetch(`${server.url}/auth${path}/approve`, { method: 'POST' }), 401, 'unauthenticated');
    await expectProblem(await person.approve(m.authUrl, {}, null), 403, 'csrf_failed');
    // An API key is not a person: it cannot approve a login.
    const byKey = await server.call('POST', `/auth${path}/approve`, { body: {} });
    expect(byKey.status).toBe(401);
    expect(await json(await person.view(m.authUrl))).toMatchObject({ state: 'pending' });
  });

  it('lets only roles that may make auth keys for others log a machine in for another user', async () => {
    const ana = await addUser('ana@example.com', 'member');
    const bo = await addUser('bo@example.com', 'member');
    const net = await addUser('net@example.com', 'network-admin');
    const it = await addUser('it@example.com', 'it-admin');
    const m = await machine();
    const waiting = m.followup();

    const member = await signIn(ana);
    await expectProblem(await member.approve(m.authUrl, { user: bo }), 403, 'insufficient_scope');
    const networkAdmin = await signIn(net);
    expect(await json(await networkAdmin.view(m.authUrl))).toMatchObject({ mayChooseUser: false });
    await expectProblem(await networkAdmin.approve(m.authUrl, { user: bo }), 403, 'insufficient_scope');
    const itAdmin = await signIn(it);
    expect(await json(await itAdmin.view(m.authUrl))).toMatchObject({ mayChooseUser: true });
    await expectProblem(await itAdmin.approve(m.authUrl, { user: 'nobody@example.com' }), 404, 'not_found');
    const done = await itAdmin.approve(m.authUrl, { user: 'bo@example.com' });
    expect(done.status).toBe(201);
    expect(await waiting).toMatchObject({ MachineAuthorized: true, Login: { LoginName: 'bo@example.com' } });
    expect((await listDevices(server, `?user=${bo}`)).map((d) => d.hostname)).toEqual(['laptop']);
  });

  it("refuses a suspended user's login and tags the user does not own; the waiting client is told why", async () => {
    const ana = await addUser('ana@example.com', 'member');
    const bo = await addUser('bo@example.com', 'member');
    await server.call('PATCH', `/v1/users/${bo}`, { body: { status: 'suspended' } });
    const first = await machine();
    const it = await signIn(await addUser('it@example.com', 'it-admin'));
    await expectProblem(await it.approve(first.authUrl, { user: bo }), 409, 'invalid_state');

    await applyPolicy(
      server,
      JSON.stringify({
        tagOwners: { 'tag:ci': ['ana@example.com'], 'tag:prod': ['autogroup:admin'] },
        acls: [{ action: 'accept', src: ['autogroup:member'], dst: ['tag:ci:22'] }],
      }),
    );
    const tagged = await machine({ RequestTags: ['tag:prod'] });
    const waiting = tagged.followup();
    const member = await signIn(ana);
    const refused = await expectProblem(await member.approve(tagged.authUrl), 409, 'invalid_state');
    expect(refused.detail).toContain('tag:prod');
    expect((await waiting).Error).toContain('tag:prod');
    expect(await json(await member.view(tagged.authUrl))).toMatchObject({ state: 'refused' });

    const owned = await machine({ RequestTags: ['tag:ci'] });
    expect((await member.approve(owned.authUrl)).status).toBe(201);
    const [device] = await listDevices(server, '?tag=tag:ci');
    expect(device).toMatchObject({ hostname: 'laptop', tags: ['tag:ci'] });
  });

  it("keeps a member's machine waiting under device approval; an admin's login approves it too", async () => {
    await server.call('PATCH', '/v1/network', { body: { deviceApproval: true } });
    const ana = await addUser('ana@example.com', 'member');
    const m1 = await machine({ Hostname: 'mine' });
    expect((await (await signIn(ana)).approve(m1.authUrl)).status).toBe(201);
    // Registered, but waiting for an admin's approval (the client shows NeedsMachineAuth).
    expect(await m1.followup()).toMatchObject({ MachineAuthorized: false });
    const m2 = await machine({ Hostname: 'theirs' });
    expect((await (await signIn(await ownerId())).approve(m2.authUrl)).status).toBe(201);
    const devices = await listDevices(server);
    const byName = Object.fromEntries(devices.map((d) => [d.hostname, d.authorized]));
    expect(byName).toEqual({ mine: false, theirs: true });
  });

  it('limits the logins one address starts, as anonymous calls are', async () => {
    await server.close();
    server = await startServer({ settings: { anonymousRateLimit: 2 } });
    const client = await controlClient(server.url);
    clients.push(client);
    const start = () => client.post('/machine/register', { NodeKey: nodeKey(), Hostinfo: { Hostname: 'spam' } });
    expect((await start()).status).toBe(200);
    expect((await start()).status).toBe(200);
    const third = await start();
    expect(third.status).toBe(429);
    const stored = await server.database.storage.db.selectFrom('machine_logins').select('token_hash').execute();
    expect(stored).toHaveLength(2);
  });

  it("keeps a waiting follow-up's channel open past the idle timeout", async () => {
    await server.close();
    server = await startServer({ settings: { controlIdleTimeoutMs: 600 } });
    const m = await machine();
    const waiting = m.followup();
    // Several idle timeouts pass with nothing but the server's pings on the channel.
    expect(await settled(waiting, 2_000)).toBe(false);
    expect((await (await signIn(await ownerId())).approve(m.authUrl)).status).toBe(201);
    expect(await waiting).toMatchObject({ MachineAuthorized: true });
  });

  it('logs the same device in again after tailscale logout, and the page names it', async () => {
    const { m, owner, deviceId } = await ownersMachine();
    const [before] = await listDevices(server);
    // tailscale logout: the login ends, and the client forgets its node key, so the next
    // tailscale up sends a new one and no old one.
    await m.client.post('/machine/register', { NodeKey: m.nodeKey, Expiry: '1970-01-01T00:02:03Z' });
    const again = JSON.parse(
      (
        await m.client.post('/machine/register', { NodeKey: nodeKey(), Hostinfo: { Hostname: 'laptop' } })
      ).body.toString(),
    );
    expect(again.AuthURL).toMatch(/\/register\//);
    expect(await json(await owner.view(again.AuthURL))).toMatchObject({ renews: { id: deviceId, name: 'laptop' } });
    // Another person would make it a new device of theirs, so their page names none.
    const ana = await signIn(await addUser('ana@example.com', 'member'));
    expect(await json(await ana.view(again.AuthURL))).toMatchObject({ renews: null });
    expect((await owner.approve(again.AuthURL)).status).toBe(201);
    const devices = await listDevices(server);
    expect(devices.map((d) => [d.id, d.name, d.addresses, d.keyExpired])).toEqual([
      [deviceId, 'laptop', before!.addresses, false],
    ]);
  });

  it('logs the same device in again after its key expired (tailscale up --force-reauth)', async () => {
    const { m, owner, deviceId } = await ownersMachine();
    expect((await server.call('POST', `/v1/devices/${deviceId}/expire`)).status).toBe(200);
    const fresh = nodeKey();
    const again = JSON.parse(
      (
        await m.client.post('/machine/register', {
          NodeKey: fresh,
          OldNodeKey: m.nodeKey,
          Hostinfo: { Hostname: 'laptop' },
        })
      ).body.toString(),
    );
    expect(again.AuthURL).toMatch(/\/register\//);
    expect(await json(await owner.view(again.AuthURL))).toMatchObject({ renews: { id: deviceId } });
    expect((await owner.approve(again.AuthURL)).status).toBe(201);
    const devices = await listDevices(server);
    expect(devices.map((d) => d.id)).toEqual([deviceId]);
  });
});

/**
 * `tailscale up` without an auth key against Warren, with the official client (tailscaled
 * v1.102.5) and a person in Chromium: the client prints a login URL, the person signs in with a
 * one-time link, sees the machine and approves it; the client proceeds, the device is the
 * person's, and it reaches a peer. The URL then says it was used.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type Browser, chromium } from 'playwright-core';
import {
  BIN,
  type Client,
  connects,
  joinNetwork,
  PUBLIC_URL,
  SERVER_URL,
  signInLink,
  startClient,
  startWarren,
  stopAll,
  until,
  type Warren,
} from './harness.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PORT_OPEN = 7003;
const MEMBER = 'ana@example.com';

let warren: Warren;
let browser: Browser;
let listener: Server;
let peer: Client;
let laptop: Client;
const upRuns: ChildProcess[] = [];

/** `tailscale up` without a key, left running: what it prints, and when it ends. */
function upWithoutKey(client: Client, extra: string[] = []) {
  let output = '';
  const child = spawn(join(BIN, 'tailscale'), [
    `--socket=${client.socketPath}`,
    'up',
    `--login-server=${SERVER_URL}`,
    `--hostname=${client.name}`,
    '--timeout=120s',
    ...extra,
  ]);
  upRuns.push(child);
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  return { output: () => output, exited };
}

before(async () => {
  listener = createServer((socket) => socket.end(`port ${PORT_OPEN}\n`));
  await new Promise<void>((resolve) => listener.listen(PORT_OPEN, '127.0.0.1', resolve));
  warren = await startWarren();
  const policy = await warren.call(
    'PUT',
    '/v1/acl',
    `{ "acls": [{ "action": "accept", "src": ["*"], "dst": ["*:${PORT_OPEN}"] }] }`,
    'application/hujson',
  );
  assert.equal(policy.status, 200, JSON.stringify(policy.body));
  const user = await warren.call('POST', '/v1/users', { loginName: MEMBER, role: 'member' });
  assert.equal(user.status, 201, JSON.stringify(user.body));
  const key = await warren.call('POST', '/v1/keys', { type: 'auth', expiresIn: '1h' });
  peer = await startClient('peer');
  await joinNetwork(peer, key.body.key);
  laptop = await startClient('laptop');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});

after(async () => {
  for (const run of upRuns) if (run.exitCode === null) run.kill('SIGTERM');
  await browser?.close();
  stopAll();
  listener?.close();
});

describe('interactive login with the Tailscale client', { concurrency: false }, () => {
  it('prints a login URL; a member signs in, approves in the console, and the device is theirs and reaches a peer', async () => {
    const up = upWithoutKey(laptop);
    const url = await until('tailscale up prints a login URL', 30_000, async () => {
      return /https?:\/\/\S+\/register\/[A-Za-z0-9_-]+/.exec(up.output())?.[0];
    });
    assert.ok(url.startsWith(`${PUBLIC_URL}/register/`), url);
    assert.equal((await laptop.status()).BackendState, 'NeedsLogin');

    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(url);
    await page.getByText('A device is asking to log in').waitFor();
    await page.goto(await signInLink(warren, MEMBER, PUBLIC_URL));
    await page.waitForURL(url);
    await page.getByRole('heading', { name: 'Log in a device' }).waitFor();
    await page
      .getByRole('definition')
      .filter({ hasText: /^laptop$/ })
      .waitFor();
    await page
      .getByRole('definition')
      .filter({ hasText: /^linux$/ })
      .waitFor();
    await page.getByRole('button', { name: 'Log in laptop' }).click();
    await page.getByText('laptop is logged in.').waitFor();

    assert.equal(await up.exited, 0, up.output());
    const status = await until('laptop is Running', 30_000, async () => {
      const s = await laptop.status();
      return s.BackendState === 'Running' ? s : undefined;
    });
    assert.ok(status.Self.TailscaleIPs.length > 0);
    const listed = await warren.call('GET', '/v1/devices?fields=all');
    const device = listed.body.devices.find((d: { name: string }) => d.name === 'laptop');
    assert.equal(device?.user?.loginName, MEMBER);
    assert.equal(device?.protocol, 'tailscale');
    const target = listed.body.devices.find((d: { name: string }) => d.name === 'peer').addresses[0];
    await until('laptop reaches its peer on the open port', 30_000, async () =>
      (await connects(laptop, target, PORT_OPEN)) ? true : undefined,
    );

    // Single use: the URL now says what became of it.
    await page.reload();
    await page.getByText('this URL cannot be used again').waitFor();
    await context.close();
  });

  it('after tailscale logout, tailscale up logs the same device in again, and the page says which', async () => {
    const devices = async () =>
      (await warren.call('GET', '/v1/devices?fields=all')).body.devices as Array<{
        id: string;
        name: string;
        addresses: string[];
        keyExpired: boolean;
        user?: { loginName: string };
      }>;
    const before = (await devices()).find((d) => d.name === 'laptop');
    assert.ok(before, 'laptop logged in in the test before');
    const out = await laptop.cli(['logout'], 15_000);
    assert.equal(out.code, 0, out.stderr);
    const up = upWithoutKey(laptop);
    const url = await until('tailscale up prints a new login URL', 30_000, async () => {
      return /https?:\/\/\S+\/register\/[A-Za-z0-9_-]+/.exec(up.output())?.[0];
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(await signInLink(warren, MEMBER, PUBLIC_URL));
    await page.goto(url);
    await page.getByRole('heading', { name: 'Log in a device' }).waitFor();
    await page.getByText('Logs in again').waitFor();
    await page.getByRole('link', { name: 'laptop' }).waitFor();
    await page.getByRole('button', { name: 'Log in laptop' }).click();
    await page.getByText('laptop is logged in.').waitFor();
    await context.close();
    assert.equal(await up.exited, 0, up.output());
    const after = (await devices()).filter((d) => d.name.startsWith('laptop'));
    assert.deepEqual(
      after.map((d) => [d.id, d.name, d.addresses, d.keyExpired, d.user?.loginName]),
      [[before.id, 'laptop', before.addresses, false, MEMBER]],
    );
  });
});

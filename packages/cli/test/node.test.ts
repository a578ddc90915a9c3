import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeClient, Warren, WarrenError } from '@warren/client';
import { defineTags, startServer, type TestServer } from '@warren/server/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent, nodeUp, simulate } from '../src/commands/node.js';
import type { Io } from '../src/commands/output.js';
import { randomNodeKey } from '../src/node/agent.js';
import { warren } from './run.js';

const until = async (check: () => Promise<boolean> | boolean, ms = 10_000) => {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

function capture(): Io & { stdout: string; stderr: string } {
  const io = {
    stdout: '',
    stderr: '',
    env: {},
    out: (text: string) => {
      io.stdout += text;
    },
    err: (text: string) => {
      io.stderr += text;
    },
  };
  return io;
}

describe('warren node', () => {
  let server: TestServer;
  let admin: Warren;
  let dir: string;
  beforeAll(async () => {
    server = await startServer();
    // Tags must be defined in the policy's tagOwners before keys or devices carry them.
    await defineTags(server, ['tag:sim', 'tag:up', 'tag:nc', 'tag:cli']);
    admin = new Warren({ url: server.url, apiKey: server.apiKey });
    dir = mkdtempSync(join(tmpdir(), 'warren-node-'));
  });
  afterAll(async () => {
    // Stopping agents aborts their requests in flight, and one aborted while connecting leaves an
    // open connection that never carries a request: the server would wait out its 60 s header
    // timeout before closing.
    server.app.server.closeAllConnections();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('simulate enrolls 20 devices, heartbeats them, and disconnects them on stop', async () => {
    const key = await admin.keys.create({ type: 'auth', reusable: true, tags: ['tag:sim'] });
    const lines: string[] = [];
    const sim = await simulate({
      server: server.url,
      authKey: key.key,
      count: 20,
      concurrency: 8,
      advertiseRoutes: ['10.44.0.0/16'],
      heartbeatMs: [30, 60],
      progress: (line) => lines.push(line),
    });
    expect(sim).toMatchObject({ enrolled: 20, failed: 0 });
    const devices = await admin.devices.list({ tag: 'tag:sim', online: true });
    expect(devices).toHaveLength(20);
    expect(devices.map((d) => d.name).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `sim-${i + 1}`).sort());
    expect((await admin.routes.list({ state: 'pending' })).filter((r) => r.prefix === '10.44.0.0/16')).toHaveLength(20);
    // the agents heartbeat on their own (the netmap endpoint may not exist yet: tolerated)
    await until(() => sim.agents.every((a) => a.heartbeats >= 2));
    await sim.stop();
    expect(await admin.devices.list({ tag: 'tag:sim', online: true })).toEqual([]);
    expect(await admin.devices.list({ tag: 'tag:sim', online: false })).toHaveLength(20);
    expect(
      lines.filter((l) => l.includes('failed')),
      lines.join('\n'),
    ).toEqual([]);
  });

  it('simulate stops early when the key is refused', async () => {
    const key = await admin.keys.create({ type: 'auth' }); // single-use
    const sim = await simulate({ server: server.url, authKey: key.key, count: 10, concurrency: 1, heartbeat: false });
    expect(sim.enrolled).toBe(1);
    expect(sim.failures).toEqual({ key_revoked: 1 });
    await sim.stop();
  });

  it('up enrolls, keeps a state file, resumes with it, and disconnects when stopped', async () => {
    const key = await admin.keys.create({ type: 'auth', tags: ['tag:up'] }); // single-use: the resume must not need it
    const stateFile = join(dir, 'state.json');
    const run = async (authKey?: string) => {
      const controller = new AbortController();
      const io = capture();
      const done = nodeUp(
        { server: server.url, authKey, hostname: 'laptop', stateFile, heartbeatMs: [20, 40] },
        io,
        controller.signal,
      );
      // Stop only once the agent has its credential (and wrote its state file): stopping
      // mid-enrollment is a different case, tested below.
      await until(async () => /^(enrolled|resumed) as/m.test(io.stdout));
      await until(async () => (await admin.devices.list({ tag: 'tag:up', online: true })).length === 1);
      controller.abort();
      await done;
      return io;
    };
    const first = await run(key.key);
    expect(first.stdout).toMatch(/^enrolled as laptop \(dev_\w+\), addresses 100\./);
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    expect(state.nodeToken).toMatch(/^wrn_node_/);
    expect(statSync(stateFile).mode & 0o777).toBe(0o600);
    const [device] = await admin.devices.list({ tag: 'tag:up' });
    expect(device!.online).toBe(false);

    const second = await run();
    expect(second.stdout).toContain(`resumed as laptop (${device!.id})`);
    expect(second.stdout).toContain('disconnected laptop');
    expect(await admin.devices.list({ tag: 'tag:up' })).toHaveLength(1);
  });

  it('up stops quietly when interrupted while it is still enrolling', async () => {
    const key = await admin.keys.create({ type: 'auth', tags: ['tag:up'] });
    const controller = new AbortController();
    const io = capture();
    const done = nodeUp(
      { server: server.url, authKey: key.key, hostname: 'hasty', heartbeatMs: [20, 40] },
      io,
      controller.signal,
    );
    controller.abort();
    await expect(done).resolves.toBeUndefined();
    expect(io.stdout).not.toContain('enrolled as');
  });

  it('NodeClient speaks the node protocol; an agent reports connections to its netmap peers', async () => {
    const key = await admin.keys.create({ type: 'auth', reusable: true, tags: ['tag:nc'] });
    const client = new NodeClient({ url: server.url });
    const { device, nodeToken } = await client.register(key.key, {
      hostname: 'nc',
      os: 'linux',
      nodeKey: randomNodeKey(),
    });
    expect(client.nodeToken).toBe(nodeToken);
    expect(await client.heartbeat({ advertiseRoutes: ['10.55.0.0/24'] })).toEqual({
      online: true,
      netmapVersion: expect.any(Number),
    });
    await client.disconnect();
    expect((await admin.devices.get(device.id)).online).toBe(false);
    const refused = await new NodeClient({ url: server.url })
      .register(key.key, { hostname: 'x', os: 'linux', nodeKey: 'nodekey:zz' })
      .catch((error) => error);
    expect(refused).toBeInstanceOf(WarrenError);
    expect(refused.code).toBe('invalid_request');

    // a netmap as the server will send it: the agent reports made-up traffic to its peers
    const peer = await new Agent({ server: server.url, hostname: 'peer', nodeKey: randomNodeKey() }).enroll(key.key);
    const agent = new Agent({ server: server.url, hostname: 'talker', nodeKey: randomNodeKey(), netmap: false });
    const self = (await agent.enroll(key.key)).device;
    agent.netmap = {
      self,
      version: 1,
      peers: [
        {
          id: peer.device.id,
          name: peer.device.name,
          addresses: peer.device.addresses!,
          allowedIPs: [],
          tags: [],
          online: true,
        },
      ],
    };
    await agent.tick();
    expect(agent.heartbeats).toBe(1);
    expect(agent.reported).toBeGreaterThan(0);
    const log = await admin.logs.connections({ device: self.id, since: '1h' });
    expect(log.entries.length).toBe(agent.reported);
    expect(log.entries[0]).toMatchObject({ src: { deviceId: self.id }, dst: { deviceId: peer.device.id } });
  });

  it('the command line checks its flags', async () => {
    const res = await warren(['node', 'simulate', '--count', 'many', '--auth-key', 'x'], { WARREN_URL: server.url });
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--count must be a positive integer');
    const bad = await warren(['node', 'simulate', '--count', '3', '--auth-key', 'wrn_auth_nope', '--duration', '1'], {
      WARREN_URL: server.url,
    });
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain('enrolled 0 of 3 devices');
    expect(bad.stderr).toContain('refused the auth key');
  });

  it('simulate runs from the command line for a set duration', async () => {
    const key = await admin.keys.create({ type: 'auth', reusable: true, tags: ['tag:cli'] });
    const handlers = () => [process.listenerCount('SIGINT'), process.listenerCount('SIGTERM')];
    const before = handlers();
    const res = await warren(
      ['node', 'simulate', '--count', '5', '--auth-key', key.key, '--duration', '1', '--no-connections'],
      { WARREN_URL: server.url },
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/^enrolled 5 of 5 devices in [\d.]+ s/);
    expect(res.stdout).toContain('stopped 5 devices');
    expect(await admin.devices.list({ tag: 'tag:cli', online: false })).toHaveLength(5);
    // Its signal handlers are gone once it has finished: later signals are not swallowed.
    expect(handlers()).toEqual(before);
  });
});

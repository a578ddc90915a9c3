/**
 * `nodeKey` and `machineKey` on /api/v2's device, as Tailscale's API shows them: the keys the
 * device registered with, in Tailscale's text form, in the list and the single device, default
 * and all fields alike. A native device has its node key and no machine key (''). A rotated node
 * key shows at once, in lists built from kept records too. /v1's device shows neither.
 * Before the keys were carried in the detail record, both were '' for every device.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { x25519Generate } from '../../src/control/tailscale/noise-crypto.js';
import { type ControlClient, controlClient, nodeKey, registerWithKey } from '../control/tailscale/ts-client.js';
import { createAuthKey, enroll } from '../devices/helpers.js';
import { json, startServer, type TestServer } from '../harness.js';

let server: TestServer;
let client: ControlClient;
const machine = x25519Generate();
const machineKey = `mkey:${machine.publicKey.toString('hex')}`;

beforeAll(async () => {
  server = await startServer();
  client = await controlClient(server.url, machine);
});
afterAll(async () => {
  client?.close();
  await server.close();
});

/** The device's keys in each /api/v2 shape: list and single device, default and all fields. */
async function keysEverywhere(id: string) {
  const shapes: Record<string, unknown> = {};
  for (const fields of ['default', 'all']) {
    const list = await server.call('GET', `/api/v2/tailnet/-/devices?fields=${fields}`);
    expect(list.status).toBe(200);
    const listed = (await json(list)).devices.find((d: any) => d.nodeId === id);
    shapes[`list ${fields}`] = { nodeKey: listed.nodeKey, machineKey: listed.machineKey };
    const one = await json(await server.call('GET', `/api/v2/device/${id}?fields=${fields}`));
    shapes[`device ${fields}`] = { nodeKey: one.nodeKey, machineKey: one.machineKey };
  }
  return shapes;
}

const everywhere = (keys: { nodeKey: string; machineKey: string }) => ({
  'list default': keys,
  'device default': keys,
  'list all': keys,
  'device all': keys,
});

it('shows the keys a Tailscale client registered with, and the new node key once it rotates', async () => {
  const authKey = (await createAuthKey(server)).key;
  const registered = await registerWithKey(client, authKey, 'laptop');
  expect(registered.status).toBe(200);
  const id = (await json(await server.call('GET', '/v1/devices'))).devices.find((d: any) => d.hostname === 'laptop').id;

  expect(registered.nodeKey).toMatch(/^nodekey:[0-9a-f]{64}$/);
  expect(machineKey).toMatch(/^mkey:[0-9a-f]{64}$/);
  expect(await keysEverywhere(id)).toEqual(everywhere({ nodeKey: registered.nodeKey, machineKey }));

  // tailscaled's rotation: the new key, with the old one to find the device by.
  const rotated = nodeKey();
  const res = await client.post('/machine/register', {
    NodeKey: rotated,
    OldNodeKey: registered.nodeKey,
    Hostinfo: { Hostname: 'laptop', OS: 'linux', IPNVersion: '1.102.5' },
  });
  expect(JSON.parse(res.body.toString())).toMatchObject({ MachineAuthorized: true });
  expect(await keysEverywhere(id)).toEqual(everywhere({ nodeKey: rotated, machineKey }));
});

it("shows a native device's node key and no machine key, and /v1 shows neither", async () => {
  const key = nodeKey();
  const native = await enroll(server, (await createAuthKey(server)).key, { hostname: 'native', nodeKey: key });
  expect(await keysEverywhere(native.device.id)).toEqual(everywhere({ nodeKey: key, machineKey: '' }));

  const v1 = JSON.stringify([
    await json(await server.call('GET', `/v1/devices/${native.device.id}`)),
    await json(await server.call('GET', '/v1/devices?fields=all')),
    native,
  ]);
  expect(v1).not.toContain(key);
  expect(v1).not.toContain(machineKey);
  expect(v1).not.toMatch(/nodeKey|machineKey/);
});

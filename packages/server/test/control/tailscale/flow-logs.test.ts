/**
 * Network flow logs of Tailscale clients over real HTTP: the network setting puts the
 * capability and the log ids in the map, and the upload endpoint (zstd as logtail sends it)
 * turns each flow into connection log entries under the rules of a native report.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { json, startServer, type TestServer } from '../../harness.js';
import { type ControlClient, controlClient, decodeMessages, mapRequest, nodeKey } from './ts-client.js';

const CAP = 'https://tailscale.com/cap/data-plane-audit-logs';
/** Every device's own node carries it (Taildrop), whatever the network's flow logs. */
const CAP_FILE_SHARING = 'https://tailscale.com/cap/file-sharing';
/** What a device's own node carries whatever the network's flow logs: Taildrop and Tailscale SSH. */
const OWN_CAPS = { [CAP_FILE_SHARING]: [], 'https://tailscale.com/cap/ssh': [], 'ssh-env-vars': [] };
let server: TestServer;
const clients: ControlClient[] = [];

beforeEach(async () => {
  server = await startServer();
});
afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await server.close();
});

interface Joined {
  client: ControlClient;
  nodeKey: string;
  id: string;
}

async function join(hostnames: string[]): Promise<Joined[]> {
  const res = await server.call('POST', '/v1/keys', { body: { type: 'auth', reusable: true } });
  const { key } = await json(res);
  const out: Joined[] = [];
  for (const hostname of hostnames) {
    const client = await controlClient(server.url);
    clients.push(client);
    const nk = nodeKey();
    const reg = await client.post('/machine/register', {
      NodeKey: nk,
      Auth: { AuthKey: key },
      Hostinfo: { Hostname: hostname, OS: 'linux', IPNVersion: '1.102.5' },
    });
    expect(reg.status).toBe(200);
    const once = await client.post('/machine/map', mapRequest(nk, false));
    const full = decodeMessages(once.body)[0] as { Node: { StableID: string } };
    out.push({ client, nodeKey: nk, id: full.Node.StableID });
  }
  return out;
}

async function fullMap(device: Joined): Promise<Record<string, unknown>> {
  const res = await device.client.post('/machine/map', mapRequest(device.nodeKey, false));
  expect(res.status).toBe(200);
  return decodeMessages(res.body)[0] as Record<string, unknown>;
}

async function setFlowLogs(on: boolean): Promise<void> {
  const res = await server.call('PATCH', '/v1/network', { body: { flowLogs: on } });
  expect(res.status).toBe(200);
  expect((await json(res)).flowLogs).toBe(on);
}

/** The node's private log id, as the client reads it from its map. */
async function logIdOf(device: Joined): Promise<string> {
  const node = (await fullMap(device)).Node as { DataPlaneAuditLogID: string };
  return node.DataPlaneAuditLogID;
}

function upload(id: string, body: unknown, headers: Record<string, string> = {}, raw?: Buffer) {
  const data = raw ?? execFileSync('zstd', ['-c', '-q'], { input: JSON.stringify(body) });
  return fetch(`${server.url}/c/tailtraffic.log.tailscale.io/${id}?copyId=${'0'.repeat(64)}`, {
    method: 'POST',
    headers: raw ? headers : { 'content-encoding': 'zstd', ...headers },
    body: data,
  });
}

const window = () => {
  const end = new Date(server.clock.now());
  return { start: new Date(end.getTime() - 5_000).toISOString(), end: end.toISOString() };
};

describe('network flow logs from Tailscale clients', () => {
  it('are off by default: the map carries neither the capability nor the log ids', async () => {
    const [a] = await join(['alpha']);
    const full = await fullMap(a as Joined);
    expect(full.DomainDataPlaneAuditLogID).toBeUndefined();
    expect((full.Node as Record<string, unknown>).CapMap).toEqual(OWN_CAPS);
    expect((full.Node as Record<string, unknown>).DataPlaneAuditLogID).toBeUndefined();
    expect((await json(await server.call('GET', '/v1/network'))).flowLogs).toBe(false);
  });

  it('turned on, reach a connected client at once: capability, its own log id, the network id', async () => {
    const [a, b] = (await join(['alpha', 'beta'])) as [Joined, Joined];
    const stream = a.client.stream(mapRequest(a.nodeKey, true));
    await stream.next(1);
    await setFlowLogs(true);
    await stream.next(2);
    stream.close();
    const delta = stream.messages[1] as Record<string, unknown>;
    const node = delta.Node as Record<string, unknown>;
    expect(node.CapMap).toEqual({ ...OWN_CAPS, [CAP]: [] });
    expect(node.DataPlaneAuditLogID).toMatch(/^[0-9a-f]{64}$/);
    expect(delta.DomainDataPlaneAuditLogID).toMatch(/^[0-9a-f]{64}$/);
    // Each device has its own id, the same in every map; peers never see it.
    const full = await fullMap(b);
    expect((full.Node as Record<string, unknown>).DataPlaneAuditLogID).not.toBe(node.DataPlaneAuditLogID);
    expect(full.DomainDataPlaneAuditLogID).toBe(delta.DomainDataPlaneAuditLogID);
    expect(JSON.stringify(full.Peers)).not.toContain(String(node.DataPlaneAuditLogID));
    expect(await logIdOf(a)).toBe(node.DataPlaneAuditLogID);
    // Tailscale's API v2 setting is the same switch.
    const v2 = await server.call('GET', '/api/v2/tailnet/-/settings');
    expect((await json(v2)).networkFlowLoggingOn).toBe(true);
  });

  it("stores the uploader's flows as connections, and rejects what is not its own", async () => {
    const [a, b] = (await join(['alpha', 'beta'])) as [Joined, Joined];
    await setFlowLogs(true);
    const id = await logIdOf(a);
    const { start, end } = window();
    const res = await upload(id, [
      {
        logtail: { client_time: end, proc_id: 7, proc_seq: 1 },
        nodeId: a.id,
        start,
        end,
        srcNode: { nodeId: a.id, addresses: ['100.64.0.1'] },
        virtualTraffic: [
          // Alpha's own connection to beta: stored, attributed to both devices.
          { proto: 6, src: '100.64.0.1:40000', dst: '100.64.0.2:22', txPkts: 3, txBytes: 180, rxPkts: 2, rxBytes: 120 },
          { proto: 1, src: '100.64.0.1:0', dst: '100.64.0.2:0', txPkts: 1, txBytes: 84 },
          // Beta's address as the source: alpha cannot speak for beta.
          { proto: 6, src: '100.64.0.2:22', dst: '100.64.0.1:40000', txPkts: 9, txBytes: 900 },
        ],
        // An exit flow whose addresses the client blanked: nothing to log.
        exitTraffic: [{ txPkts: 4, txBytes: 400 }],
        // The WireGuard packets underneath are not connections of the mesh.
        physicalTraffic: [{ src: '100.64.0.2:0', dst: '192.0.2.2:41641', txPkts: 5, txBytes: 500 }],
      },
      // A message in beta's name is rejected whole.
      { nodeId: b.id, start, end, virtualTraffic: [{ proto: 6, src: '100.64.0.1:1', dst: '100.64.0.2:2' }] },
      { logtail: { client_time: end }, text: 'a line that is not a flow message' },
    ]);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ accepted: 2, rejected: 3 });

    const log = await json(await server.call('GET', '/v1/logs/connections'));
    expect(log.entries).toHaveLength(2);
    const [tcp, icmp] = log.entries;
    expect(tcp).toMatchObject({
      start,
      end,
      proto: 'tcp',
      src: { deviceId: a.id, deviceName: 'alpha', addr: '100.64.0.1:40000' },
      dst: { deviceId: b.id, deviceName: 'beta', addr: '100.64.0.2:22' },
      txBytes: 180,
      rxBytes: 120,
      txPackets: 3,
      rxPackets: 2,
      reportedBy: a.id,
    });
    expect(icmp).toMatchObject({ proto: 'icmp', src: { deviceId: a.id }, dst: { deviceId: b.id }, rxBytes: 0 });
  });

  it('accepts an uncompressed upload (logtail does not compress small bodies)', async () => {
    const [a] = (await join(['alpha', 'beta'])) as [Joined, Joined];
    await setFlowLogs(true);
    const { start, end } = window();
    const body = [
      {
        nodeId: a.id,
        start,
        end,
        virtualTraffic: [{ proto: 17, src: '100.64.0.1:5353', dst: '100.64.0.2:53', txPkts: 1, txBytes: 60 }],
      },
    ];
    const res = await upload(await logIdOf(a), undefined, {}, Buffer.from(JSON.stringify(body)));
    expect(await res.json()).toEqual({ accepted: 1, rejected: 0 });
  });

  it('refuses uploads it cannot attribute or read, storing nothing', async () => {
    const [a] = (await join(['alpha', 'beta'])) as [Joined, Joined];
    const { start, end } = window();
    const body = [
      { nodeId: a.id, start, end, virtualTraffic: [{ proto: 6, src: '100.64.0.1:1', dst: '100.64.0.2:2' }] },
    ];
    await setFlowLogs(true);
    const id = await logIdOf(a);

    const unknown = await upload('ab'.repeat(32), body);
    expect(unknown.status).toBe(401);
    expect((await json(unknown)).code).toBe('unauthenticated');
    // The public id (what Warren stores, and what the client prints) is not the credential.
    const publicId = createHash('sha256').update(Buffer.from(id, 'hex')).digest('hex');
    expect((await upload(publicId, body)).status).toBe(401);
    expect((await upload('not-an-id', body)).status).toBe(401);
    const gzip = await upload(id, body, { 'content-encoding': 'gzip' });
    expect(gzip.status).toBe(415);
    const broken = await upload(id, undefined, { 'content-encoding': 'zstd' }, Buffer.from('not zstd at all'));
    expect((await json(broken)).code).toBe('invalid_request');
    const notJson = await upload(id, undefined, {}, Buffer.from('{"nodeId":'));
    expect(notJson.status).toBe(400);
    // Decoding past the limit is refused before it is decoded.
    const bomb = execFileSync('zstd', ['-c', '-q'], { input: Buffer.alloc(2 * 1024 * 1024, 0x20) });
    const tooLarge = await upload(id, undefined, { 'content-encoding': 'zstd' }, bomb);
    expect(tooLarge.status).toBe(413);

    await setFlowLogs(false);
    const off = await upload(id, body);
    expect(off.status).toBe(409);
    expect((await fullMap(a)).Node).toHaveProperty('CapMap', OWN_CAPS);
    expect((await json(await server.call('GET', '/v1/logs/connections'))).entries).toEqual([]);
  });

  it('answers the client’s own logs (another collection) 200 and keeps nothing of them', async () => {
    const [a] = (await join(['alpha'])) as [Joined];
    await setFlowLogs(true);
    const { start, end } = window();
    // Even a body shaped like flows, under the device's real flow-log id, is not read as one.
    const flows = [
      { nodeId: a.id, start, end, virtualTraffic: [{ proto: 6, src: '100.64.0.1:1', dst: '100.64.0.2:2' }] },
    ];
    const ownLogs = (id: string, body: string | Buffer, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/c/tailnode.log.tailscale.io/${id}`, { method: 'POST', headers, body });
    for (const id of [await logIdOf(a), 'cd'.repeat(32)]) {
      const plain = await ownLogs(id, JSON.stringify(flows));
      expect(plain.status).toBe(200);
      expect(await json(plain)).toEqual({ stored: false });
      const packed = execFileSync('zstd', ['-c', '-q'], { input: '{"logtail":{},"text":"magicsock: ..."}' });
      expect((await ownLogs(id, packed, { 'content-encoding': 'zstd' })).status).toBe(200);
    }
    const badId = await ownLogs('not-an-id', '[]');
    expect(badId.status).toBe(400);
    expect((await json(badId)).code).toBe('invalid_request');
    expect((await json(await server.call('GET', '/v1/logs/connections'))).entries).toEqual([]);
  });
});

/**
 * Bytes of a Tailscale client's full map for 1,000 peers, as Warren sends it: the JSON and its
 * zstd frame (map-compression.ts), beside an uncompressed frame of the same JSON as baseline.
 * Run: npx tsx --conditions=@warren/source bench/tailscale-map-size.ts
 */
import { randomBytes } from 'node:crypto';
import { zstdCompress } from '../packages/server/src/control/tailscale/map-compression.js';
import { fullResponse } from '../packages/server/src/control/tailscale/map-delta.js';
import type { MapState } from '../packages/server/src/control/tailscale/map-state.js';
import { digestOf } from '../packages/server/src/control/tailscale/sent-map.js';
import { hostPrefix, numericId, tailcfgNode } from '../packages/server/src/control/tailscale/tailcfg.js';
import type { NodeRow } from '../packages/server/src/control/tailscale/tailscale.repository.js';
import { sentText } from '../packages/server/src/control/tailscale/text-digest.js';
import { addressesOf } from '../packages/server/src/modules/devices/addresses.js';

const PEERS = 1000;
// Keys are random, as real ones are: they are what does not compress.
const hex = (_i: number, _salt: string) => randomBytes(32).toString('hex');
const now = Date.now();

function row(i: number): NodeRow {
  return {
    id: `dev_${hex(i, 'id').slice(0, 16)}`,
    network_id: 'net_1',
    name: `host-${i}`,
    hostname: `host-${i}`,
    os: 'linux',
    node_key: `nodekey:${hex(i, 'n')}`,
    machine_key: `mkey:${hex(i, 'm')}`,
    disco_key: `discokey:${hex(i, 'd')}`,
    endpoints: `198.51.100.${i % 250}:${40000 + ((i * 7919) % 20000)},10.0.${i % 250}.7:41641`,
    home_derp: 900,
    hostinfo: JSON.stringify({ Hostname: `host-${i}`, OS: 'linux', IPNVersion: '1.102.5', GoArch: 'amd64' }),
    user_id: `usr_${i % 20}`,
    user_login: `user${i % 20}@example.com`,
    user_display: `User ${i % 20}`,
    user_status: 'active',
    tags: '[]',
    addr_index: i + 1,
    created_at: now,
    last_seen_at: now,
    expires_at: now + 180 * 86_400_000,
    ephemeral: 0,
    protocol: 'tailscale',
    authorized: 1,
    key_expired: 0,
    key_expiry_disabled: 0,
    client_version: '1.102.5',
    flow_log_id: null,
  };
}

const domain = 'example.warren.internal';
const view = (r: NodeRow) => {
  const own = addressesOf(r.addr_index).map(hostPrefix);
  return { allowedIPs: own, primaryRoutes: [], online: true };
};
const self = row(0);
const peers: MapState['peers'] = new Map();
const peerIds: string[] = [];
for (let i = 1; i <= PEERS; i++) {
  const r = row(i);
  const text = JSON.stringify(tailcfgNode(r, view(r), domain, now));
  peers.set(numericId(r.id), { text, digest: digestOf(text) });
  peerIds.push(r.id);
}
const state: MapState = {
  node: JSON.stringify(tailcfgNode(self, view(self), domain, now)),
  peers,
  peerIds,
  packetFilter: JSON.stringify([{ SrcIPs: ['*'], DstPorts: [{ IP: '*', Ports: { First: 0, Last: 65535 } }] }]),
  sshPolicy: '{"rules":[]}',
  userProfiles: new Map(),
  dns: sentText(JSON.stringify({ Resolvers: [], Domains: [domain], Proxied: true })),
  derp: sentText(JSON.stringify({ Regions: {} })),
  domain,
  flowLogDomain: '',
  shape: '',
  loginExpiresAt: null,
};
const json = Buffer.from(fullResponse(state, 1, new Date(now)));
const started = process.hrtime.bigint();
const frame = zstdCompress(json);
const ms = Number(process.hrtime.bigint() - started) / 1e6;
console.log(`full map, ${PEERS} peers: JSON ${json.length} bytes (baseline: uncompressed frame ${json.length + 12})`);
console.log(
  `zstd level 3: ${frame.length} bytes, ratio ${(json.length / frame.length).toFixed(1)}x, ${ms.toFixed(1)} ms`,
);

/**
 * What a Tailscale client's map holds, built from the same netmap as a native device's (the
 * peers the policy lets it reach or be reached by, their allowedIPs, presence) plus the rows
 * of those peers, the packet filter compiled from the current policy, DNS and the DERP map.
 * Each peer is kept as its JSON text, so the next state is compared with this one peer by peer
 * (map-delta.ts) and only what changed is sent.
 */
import type { DeviceBody, PeerBody } from '@warren/contract';
import type { AppContext } from '../../core/context.js';
import { currentPolicy } from '../../modules/acl/policy-cache.js';
import { storeFlowLogId } from '../../modules/devices/device-reports.js';
import type { ChangeFeed } from '../../modules/netmap/change-feed.js';
import { netmapWithView } from '../../modules/netmap/netmap.service.js';
import type { NetworkView } from '../../modules/netmap/netmap-view.js';
import { deviceIdentities, policyDevice, policyUsers } from '../../modules/netmap/policy-inputs.repository.js';
import type { DerpSettings } from '../../modules/network/dns-derp-settings.js';
import {
  type CompiledPolicy,
  type FilterRule,
  type PolicyDevice,
  type PolicyUser,
  packetFilter,
} from '../../policy/index.js';
import { flowLogIds } from './flow-log-ids.js';
import { mapRound, type NodeText } from './map-round.js';
import { hostPrefix, numericId, tailcfgNode, type UserProfile, userProfile } from './tailcfg.js';
import type { NodeRow } from './tailscale.repository.js';

/**
 * What the protocol's handlers share: the app's context, where the DERP map comes from and the
 * process's change feed the map streams wait on.
 */
export interface Control {
  ctx: AppContext;
  derpMap: (settings: DerpSettings) => unknown;
  feed: ChangeFeed;
}

export interface MapState {
  node: string;
  /** Peer numeric id → its tailcfg.Node as JSON text (shared by the streams of a round). */
  peers: Map<number, NodeText>;
  /** The same peers by device id (what the change feed names). */
  peerIds: string[];
  packetFilter: string;
  userProfiles: Map<number, UserProfile>;
  dns: string;
  derp: string;
  domain: string;
  /** The network's private flow log id, or '' while it does not log flows. */
  flowLogDomain: string;
}

interface NativeNetmap {
  self: DeviceBody;
  peers: PeerBody[];
}

/** What a packet filter is compiled from: the policy, the network's users, the devices in the map. */
interface FilterInputs {
  policy: CompiledPolicy;
  users: PolicyUser[];
  /** The map's devices (itself and its peers) in the network's order, which rules list them in. */
  devices: PolicyDevice[];
}

/**
 * Taken from the network view the netmap was built from, which every stream of the network
 * shares for one change; read only for a device outside netmaps, which has no view.
 */
async function filterInputs(
  ctx: AppContext,
  networkId: string,
  ids: string[],
  view: NetworkView | undefined,
): Promise<FilterInputs> {
  if (view) {
    const slots = ids.map((id) => view.index.get(id)).filter((i): i is number => i !== undefined);
    slots.sort((a, b) => a - b);
    const devices = slots.map((i) => view.policyDeviceAt(i));
    return { policy: view.compiledPolicy, users: view.users, devices };
  }
  const [policy, users, identities] = await Promise.all([
    currentPolicy(ctx.db, networkId),
    policyUsers(ctx.db, networkId),
    deviceIdentities(ctx.db, networkId, ids),
  ]);
  return { policy: policy.compiled, users, devices: identities.map((r) => policyDevice(r)) };
}

/** What a stream keeps of its device to build its map again: which device, under which keys. */
export type NodeIdentity = Pick<NodeRow, 'id' | 'network_id' | 'node_key' | 'machine_key'>;

/**
 * The map of `self`. With `sameNode`, undefined when the device's row as the round read it no
 * longer holds self's node key and machine key, or its user is suspended: a stream checks that
 * on every build, from the rows it shares rather than a query of its own, so it needs to keep
 * no more of its device than the identity.
 */
export async function mapState(control: Control, self: NodeRow): Promise<MapState>;
export async function mapState(control: Control, self: NodeIdentity, sameNode: true): Promise<MapState | undefined>;
export async function mapState(
  control: Control,
  self: NodeRow | NodeIdentity,
  sameNode = false,
): Promise<MapState | undefined> {
  const { ctx } = control;
  const { networkId, id } = { networkId: self.network_id, id: self.id };
  const { netmap, view } = await netmapWithView(ctx, networkId, id);
  const round = mapRound(control, networkId, view);
  const native = JSON.parse(netmap.body ?? '{}') as NativeNetmap;
  const nativePeerIds = native.peers.map((p) => p.id);
  const [rows, network, filter] = await Promise.all([
    round.nodeRows([id, ...nativePeerIds]),
    round.mapNetwork(),
    filterInputs(ctx, networkId, [id, ...nativePeerIds], view),
  ]);
  const { domain } = network;
  const now = ctx.clock.now();
  const byId = new Map(rows.map((r) => [r.id, r]));
  const row = byId.get(id);
  if (
    sameNode &&
    (!row || row.node_key !== self.node_key || row.machine_key !== self.machine_key || row.user_status === 'suspended')
  )
    return undefined;
  // Without sameNode, self is the whole row (the first map, when the round may not have it).
  const me = row ?? ('hostname' in self ? self : undefined);
  if (!me) return undefined;
  const flowLogs = network.flowLogs ? await flowLogIds(ctx.db, networkId, id) : undefined;
  if (flowLogs && me.flow_log_id !== flowLogs.nodePublic) await storeFlowLogId(ctx.db, me, flowLogs.nodePublic);
  const userProfiles = new Map<number, UserProfile>();
  const addProfile = (row: NodeRow) => {
    const profile = userProfile(row);
    userProfiles.set(profile.ID, profile);
  };

  const ownPrimaries = (native.self.routes ?? []).filter((r) => r.primary).map((r) => r.prefix);
  const ownAddresses = (native.self.addresses ?? []).map(hostPrefix);
  const node = JSON.stringify(
    tailcfgNode(
      me,
      {
        allowedIPs: [...ownAddresses, ...ownPrimaries],
        primaryRoutes: ownPrimaries,
        online: true,
        ...(flowLogs && { flowLogId: flowLogs.node }),
      },
      domain,
      now,
    ),
  );
  addProfile(me);

  const peers = new Map<number, NodeText>();
  const peerIds: string[] = [];
  for (const peer of native.peers) {
    const row = byId.get(peer.id);
    if (!row) continue;
    peerIds.push(peer.id);
    const own = new Set(peer.addresses.map(hostPrefix));
    const allowedIPs = peer.allowedIPs.map(hostPrefix);
    const primaryRoutes = allowedIPs.filter((p) => !own.has(p));
    // The same peer seen the same way is the same text for every viewer of the round.
    const key = `${peer.id} ${peer.online} ${allowedIPs.join(',')}`;
    peers.set(
      numericId(peer.id),
      round.nodeText(key, () =>
        JSON.stringify(tailcfgNode(row, { allowedIPs, primaryRoutes, online: peer.online }, domain, now)),
      ),
    );
    addProfile(row);
  }

  const viewer = filter.devices.find((d) => d.id === id);
  const ownRoutes = (native.self.routes ?? []).filter((r) => r.state === 'approved').map((r) => r.prefix);
  const rules: FilterRule[] = viewer
    ? packetFilter(filter.policy, { ...viewer, routes: ownRoutes }, filter.devices, filter.users)
    : [];
  return {
    node,
    peers,
    peerIds,
    packetFilter: JSON.stringify(rules),
    userProfiles,
    dns: network.dns,
    derp: network.derp,
    domain,
    flowLogDomain: flowLogs?.domain ?? '',
  };
}

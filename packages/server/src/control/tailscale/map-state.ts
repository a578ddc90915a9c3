/**
 * What a Tailscale client's map holds, built from the same network view as a native device's
 * netmap (the peers the policy lets it reach or be reached by, their allowedIPs, presence;
 * map-inputs.ts) plus the rows of those peers, the packet filter compiled from the current
 * policy, DNS and the DERP map.
 * Each peer is kept as its JSON text, so the next state is compared with this one peer by peer
 * (map-delta.ts) and only what changed is sent.
 */
import type { AppContext } from '../../core/context.js';
import { storeFlowLogId } from '../../modules/devices/device-reports.js';
import type { ChangeFeed } from '../../modules/netmap/change-feed.js';
import type { NetmapHead } from '../../modules/netmap/netmap.repository.js';
import type { DerpSettings } from '../../modules/network/dns-derp-settings.js';
import { type FilterRule, packetFilter } from '../../policy/index.js';
import { flowLogIds } from './flow-log-ids.js';
import { fromNetmap, fromSharedView } from './map-inputs.js';
import type { ProfileText } from './map-round.js';
import { hostPrefix, numericId, tailcfgNode } from './tailcfg.js';
import type { NodeRow } from './tailscale.repository.js';
import type { SentText } from './text-digest.js';

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
  peers: Map<number, SentText>;
  /** The same peers by device id (what the change feed names). */
  peerIds: string[];
  packetFilter: string;
  /** Profile id → its JSON (shared by the streams of a round, as the DNS config and DERP map). */
  userProfiles: Map<number, ProfileText>;
  dns: SentText;
  derp: SentText;
  domain: string;
  /** The network's private flow log id, or '' while it does not log flows. */
  flowLogDomain: string;
}

/** What a stream keeps of its device to build its map again: which device, under which keys. */
export type NodeIdentity = Pick<NodeRow, 'id' | 'network_id' | 'node_key' | 'machine_key'>;

/**
 * The map of `self`. With `sameNode`, undefined when the device's row as the round read it no
 * longer holds self's node key and machine key, or its user is suspended: a stream checks that
 * on every build, from the rows it shares rather than a query of its own, so it needs to keep
 * no more of its device than the identity. `head`: the head of the change the map is built
 * for, when a change feed told of one.
 */
export async function mapState(control: Control, self: NodeRow): Promise<MapState>;
export async function mapState(
  control: Control,
  self: NodeIdentity,
  sameNode: true,
  head?: NetmapHead,
): Promise<MapState | undefined>;
export async function mapState(
  control: Control,
  self: NodeRow | NodeIdentity,
  sameNode = false,
  head?: NetmapHead,
): Promise<MapState | undefined> {
  const { ctx } = control;
  const { networkId, id } = { networkId: self.network_id, id: self.id };
  const inputs = (await fromSharedView(control, self, head)) ?? (await fromNetmap(control, self));
  const { round, rows: byId, filter } = inputs;
  const network = await round.mapNetwork();
  const { domain } = network;
  const now = ctx.clock.now();
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
  const userProfiles = new Map<number, ProfileText>();
  const addProfile = (row: NodeRow) => {
    const profile = round.profileText(row);
    userProfiles.set(profile.id, profile);
  };

  const ownPrimaries = [...inputs.primaryRoutes];
  const ownAddresses = inputs.addresses.map(hostPrefix);
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

  const peers = new Map<number, SentText>();
  const peerIds: string[] = [];
  for (const peer of inputs.peers) {
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
  const rules: FilterRule[] = viewer
    ? packetFilter(filter.policy, { ...viewer, routes: [...inputs.routes] }, filter.devices, filter.users)
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

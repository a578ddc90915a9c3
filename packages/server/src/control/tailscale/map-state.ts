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
import { NO_SSH_RULES, packetFilterJson, sshPolicyJson } from '../../policy/index.js';
import { flowLogIds } from './flow-log-ids.js';
import { fromNetmap, fromSharedView, type MapPeer, type ViewOnlyInputs, viewOnlyInputs } from './map-inputs.js';
import type { MapNetwork, ProfileText } from './map-round.js';
import { checkActionBase } from './ssh-action.js';
import { hostPrefix, numericId, tailcfgNode } from './tailcfg.js';
import type { NodeRow } from './tailscale.repository.js';
import { digestOf, type SentText } from './text-digest.js';

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
  /** Its tailcfg.SSHPolicy as JSON: the `ssh` rules whose dst holds it (policy/ssh-policy.ts). */
  sshPolicy: string;
  /** Profile id → its JSON (shared by the streams of a round, as the DNS config and DERP map). */
  userProfiles: Map<number, ProfileText>;
  dns: SentText;
  derp: SentText;
  domain: string;
  /** The network's private flow log id, or '' while it does not log flows. */
  flowLogDomain: string;
  /** Digest of what the map's shape is made of besides the rows (mapShape). */
  shape: string;
  /** When the device's own login expires by the clock, as its row says; null: never. */
  loginExpiresAt: number | null;
}

/**
 * What a change that moved only the policy alters of a map whose shape it left as it was: the
 * packet filter and the SSH policy. Each row a map is made of is what its round read; a change to a row that
 * peers see (keys, endpoints, Hostinfo, tags, expiry) moves the netmap epoch, so when the only
 * moves since the map sent were policies' own, and presence held, the device's node, its
 * peers' nodes and their profiles are those sent, but for the fields nothing announces
 * (LastSeen of peers that are online), which the next change about their devices carries.
 * Nor can the device's own row have changed: a new node key, a suspended user, an approval or
 * a stored expiry move the epoch too. So such a build reads no row at all: only the clock can
 * have cut the device off since (its login expiring), which the stream's map says when.
 */
export interface FilterUpdate {
  filterOnly: true;
  packetFilter: string;
  sshPolicy: string;
}

/**
 * Of a map, what besides the rows a policy change can alter: its peers (who sees whom), how
 * each is seen (its allowedIPs: the routes the viewer may reach; its presence), the device's
 * own primary routes and the network's parts. Two maps of one device at the same netmap epoch
 * and presence with the same shape differ at most in their packet filters.
 *
 * The peers are a set: their keys are sorted (each begins with its peer's id), as the order a
 * view lists them in is not the map's. A view patched by enrollments appends each new device
 * where a view loaded anew (every policy change that means something new) lists them by
 * creation time, and on PostgreSQL concurrent enrollments commit out of that order: in the
 * listed order, the first policy change after an enrollment found most maps of another shape
 * and built them whole.
 */
function mapShape(network: MapNetwork, ownPrimaries: readonly string[], peerKeys: readonly string[]): string {
  const { domain, dns, derp } = network;
  const peers = [...peerKeys].sort().join('\n');
  return digestOf(`${domain}\n${dns.digest}\n${derp.digest}\n${ownPrimaries.join(',')}\n${peers}`);
}

/** How a peer is seen, as the map's shape and the round's node texts key it. */
const peerKey = (peer: MapPeer, allowedIPs: readonly string[]) => `${peer.id} ${peer.online} ${allowedIPs.join(',')}`;

/** What a stream keeps of its map that says whether a policy change can send the filter alone. */
export type SentShape = Pick<MapState, 'shape' | 'loginExpiresAt'>;

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
/**
 * `sent`: what the stream kept of the map sent, when only policy changes were made since it was
 * (map-stream.ts, NetworkChange.policyOnly): a map of the same shape is answered with its
 * filter alone (filterUpdate), and no row is read and no node, peer or profile made again.
 */
export async function mapState(
  control: Control,
  self: NodeIdentity,
  sameNode: true,
  head: NetmapHead,
  sent: SentShape,
): Promise<MapState | FilterUpdate | undefined>;
export async function mapState(
  control: Control,
  self: NodeRow | NodeIdentity,
  sameNode = false,
  head?: NetmapHead,
  sent?: SentShape,
): Promise<MapState | FilterUpdate | undefined> {
  if (sent) {
    const update = await filterUpdate(control, self, head, sent);
    if (update) return update;
  }
  const { ctx } = control;
  const { networkId, id } = { networkId: self.network_id, id: self.id };
  const inputs = (await fromSharedView(control, self, head)) ?? (await fromNetmap(control, self));
  const { round, rows: byId } = inputs;
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

  const ownPrimaries = [...inputs.primaryRoutes];
  const peerKeys: string[] = [];
  const peerAllowedIPs: string[][] = [];
  for (const peer of inputs.peers) {
    const allowedIPs = byId.has(peer.id) ? peer.allowedIPs.map(hostPrefix) : [];
    peerAllowedIPs.push(allowedIPs);
    if (byId.has(peer.id)) peerKeys.push(peerKey(peer, allowedIPs));
  }
  const shape = mapShape(network, ownPrimaries, peerKeys);

  const flowLogs = network.flowLogs ? await flowLogIds(ctx.db, networkId, id) : undefined;
  if (flowLogs && me.flow_log_id !== flowLogs.nodePublic) await storeFlowLogId(ctx.db, me, flowLogs.nodePublic);
  const userProfiles = new Map<number, ProfileText>();
  const addProfile = (row: NodeRow) => {
    const profile = round.profileText(row);
    userProfiles.set(profile.id, profile);
  };

  const ownAddresses = inputs.addresses.map(hostPrefix);
  const node = JSON.stringify(
    tailcfgNode(
      me,
      {
        allowedIPs: [...ownAddresses, ...ownPrimaries],
        primaryRoutes: ownPrimaries,
        online: true,
        own: true,
        ...(flowLogs && { flowLogId: flowLogs.node }),
      },
      domain,
      now,
    ),
  );
  addProfile(me);

  const peers = new Map<number, SentText>();
  const peerIds: string[] = [];
  for (const [at, peer] of inputs.peers.entries()) {
    const row = byId.get(peer.id);
    if (!row) continue;
    const key = peerKeys[peerIds.length];
    peerIds.push(peer.id);
    const own = new Set(peer.addresses.map(hostPrefix));
    const allowedIPs = peerAllowedIPs[at];
    const primaryRoutes = allowedIPs.filter((p) => !own.has(p));
    // The same peer seen the same way (its key) is the same text for every viewer of the round.
    peers.set(
      numericId(peer.id),
      round.nodeText(key, () =>
        JSON.stringify(tailcfgNode(row, { allowedIPs, primaryRoutes, online: peer.online }, domain, now)),
      ),
    );
    addProfile(row);
  }

  return {
    node,
    peers,
    peerIds,
    ...filtersOf(inputs, id, checkActionBase(ctx, networkId)),
    userProfiles,
    dns: network.dns,
    derp: network.derp,
    domain,
    flowLogDomain: flowLogs?.domain ?? '',
    shape,
    loginExpiresAt: me.key_expiry_disabled ? null : me.expires_at,
  };
}

/**
 * The filter alone (FilterUpdate) when the map built from the view at `head` has the shape of
 * the one sent, from the view alone; undefined when it must be built whole: the shape moved,
 * the device's login expired by the clock (its map is cut off), the view does not hold it, or
 * the network logs flows (its node carries ids read per device, flowLogIds). A peer without a
 * row (deleted after the view was read) counts in the shape here and not in a whole build:
 * such a race builds whole, never the other way round.
 */
async function filterUpdate(
  control: Control,
  self: NodeIdentity,
  head: NetmapHead | undefined,
  sent: SentShape,
): Promise<FilterUpdate | undefined> {
  if (sent.loginExpiresAt !== null && sent.loginExpiresAt <= control.ctx.clock.now()) return undefined;
  const inputs = await viewOnlyInputs(control, self, head);
  if (!inputs) return undefined;
  const network = await inputs.round.mapNetwork();
  if (network.flowLogs) return undefined;
  const peerKeys = inputs.peers.map((peer) => peerKey(peer, peer.allowedIPs.map(hostPrefix)));
  if (mapShape(network, [...inputs.primaryRoutes], peerKeys) !== sent.shape) return undefined;
  return { filterOnly: true, ...filtersOf(inputs, self.id, checkActionBase(control.ctx, self.network_id)) };
}

/**
 * The packet filter and SSH policy of device `id` as JSON, from its map's inputs: the filter
 * made once per group of devices that share one identity and one map where the policy allows
 * (packetFilterJson).
 */
function filtersOf(inputs: ViewOnlyInputs, id: string, base: string): Pick<MapState, 'packetFilter' | 'sshPolicy'> {
  const { filter } = inputs;
  const device = filter.devices.find((d) => d.id === id);
  // The view's device object itself when it serves no route (its routes are the view's, none):
  // the filter then finds its subject among those kept per policy instead of making it anew.
  const viewer =
    device && (inputs.routes.length > 0 || device.routes.length > 0)
      ? { ...device, routes: [...inputs.routes] }
      : device;
  if (!viewer) return { packetFilter: '[]', sshPolicy: NO_SSH_RULES };
  return {
    packetFilter: packetFilterJson(filter.policy, viewer, filter.devices, filter.users),
    sshPolicy: sshPolicyJson(filter.policy, viewer, filter.devices, filter.users, base),
  };
}

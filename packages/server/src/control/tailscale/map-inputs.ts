/**
 * What a device's Tailscale map is made of: its peers with their presence and allowedIPs, its
 * own addresses and routes, the rows of all of them and the inputs of its packet filter. Taken
 * from the network view every stream of a change shares; a device that view does not hold is
 * served from its native netmap instead.
 */
import type { DeviceBody, PeerBody } from '@warren/contract';
import type { AppContext } from '../../core/context.js';
import { currentPolicy } from '../../modules/acl/policy-cache.js';
import { isIsolated } from '../../modules/devices/standing.js';
import type { NetmapHead } from '../../modules/netmap/netmap.repository.js';
import { netmapWithView } from '../../modules/netmap/netmap.service.js';
import type { NetworkView } from '../../modules/netmap/netmap-view.js';
import { deviceIdentities, policyDevice, policyUsers } from '../../modules/netmap/policy-inputs.repository.js';
import { sharedView } from '../../modules/netmap/shared-view.js';
import type { CompiledPolicy, PolicyDevice, PolicyUser } from '../../policy/index.js';
import { type MapRound, mapRound, type RoundOwner } from './map-round.js';
import type { NodeRow } from './tailscale.repository.js';

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

/** A peer as the map shows it: its addresses, what goes in its allowedIPs, and its presence. */
export interface MapPeer {
  id: string;
  online: boolean;
  addresses: readonly string[];
  allowedIPs: readonly string[];
}

/** Which device a map is for. */
type DeviceOf = Pick<NodeRow, 'id' | 'network_id'>;

/** What a device's map is made of. */
export interface MapInputs {
  round: MapRound;
  /** The rows of the device and of its peers that still exist, by id. */
  rows: Map<string, NodeRow>;
  peers: MapPeer[];
  /** The device's own addresses, and the routes it serves as primary (the rest of its allowedIPs). */
  addresses: readonly string[];
  primaryRoutes: readonly string[];
  /**
   * The routes its packet filter opens: from the shared view those it serves (approved and
   * advertised, what the policy engine calls a device's routes); from the native netmap every
   * approved one.
   */
  routes: readonly string[];
  filter: FilterInputs;
}

/** What a device's map is made of besides the rows: all the shared view holds. */
export type ViewOnlyInputs = Omit<MapInputs, 'rows'>;

/**
 * From the network view every stream of the change shares (shared-view.ts): its peers as the
 * peer map lists them, their presence from the snapshot, the routes from the primaries; nothing
 * read per device. Undefined when the view does not hold the device (it is outside netmaps, or
 * raced a re-enrolment).
 */
export async function viewOnlyInputs(
  control: RoundOwner,
  self: DeviceOf,
  head?: NetmapHead,
): Promise<ViewOnlyInputs | undefined> {
  const { ctx } = control;
  const shared = await sharedView(ctx, self.network_id, head);
  const slot = shared?.view.index.get(self.id);
  if (!shared || slot === undefined) return undefined;
  const { view, presence, primaries } = shared;
  const round = mapRound(control, self.network_id, view);
  const peers: MapPeer[] = [];
  const slots = [slot];
  for (const peer of view.peersFor(primaries).peers(self.id)) {
    const at = view.index.get(peer.id)!;
    slots.push(at);
    const { addresses } = view.policyDeviceAt(at);
    peers.push({ id: peer.id, online: presence.online.has(peer.id), addresses, allowedIPs: peer.allowedIPs });
  }
  slots.sort((a, b) => a - b);
  const me = view.policyDeviceAt(slot);
  return {
    round,
    peers,
    addresses: me.addresses,
    primaryRoutes: primaries.byDevice.get(self.id) ?? [],
    routes: primaries.served.get(self.id) ?? [],
    filter: { policy: view.compiledPolicy, users: view.users, devices: slots.map((i) => view.policyDeviceAt(i)) },
  };
}

/**
 * The view's inputs (viewOnlyInputs) with the rows of the device and its peers, read by the round;
 * no native netmap written and parsed back. Undefined when the view does not hold the device
 * or its login expired by the clock: the native netmap decides those.
 */
export async function fromSharedView(
  control: RoundOwner,
  self: DeviceOf,
  head?: NetmapHead,
): Promise<MapInputs | undefined> {
  const inputs = await viewOnlyInputs(control, self, head);
  if (!inputs) return undefined;
  const rows = await inputs.round.nodeRows([self.id, ...inputs.peers.map((p) => p.id)]);
  const byId = new Map(rows.map((r) => [r.id, r]));
  const row = byId.get(self.id);
  if (row && isIsolated(row, control.ctx.clock.now())) return undefined;
  return { ...inputs, rows: byId };
}

/**
 * Taken from the network view the netmap was built from; read only for a device outside
 * netmaps, which has no view.
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

/** From the device's native netmap: a device outside netmaps (itself, no peers) and the odd race. */
export async function fromNetmap(control: RoundOwner, self: DeviceOf): Promise<MapInputs> {
  const { ctx } = control;
  const { networkId, id } = { networkId: self.network_id, id: self.id };
  const { netmap, view } = await netmapWithView(ctx, networkId, id);
  const round = mapRound(control, networkId, view);
  const native = JSON.parse(netmap.body ?? '{}') as NativeNetmap;
  const nativePeerIds = native.peers.map((p) => p.id);
  const [rows, filter] = await Promise.all([
    round.nodeRows([id, ...nativePeerIds]),
    filterInputs(ctx, networkId, [id, ...nativePeerIds], view),
  ]);
  const routes = native.self.routes ?? [];
  return {
    round,
    rows: new Map(rows.map((r) => [r.id, r])),
    peers: native.peers,
    addresses: native.self.addresses ?? [],
    primaryRoutes: routes.filter((r) => r.primary).map((r) => r.prefix),
    routes: routes.filter((r) => r.state === 'approved').map((r) => r.prefix),
    filter,
  };
}

/**
 * SQL of the Tailscale protocol: the device a node key names, the rows its map is made of
 * (one query for all its peers), and what a map request reports (disco key, endpoints, home
 * relay, Hostinfo, and from it the hostname, OS and client version the device's record shows,
 * which change when the client is upgraded). A report that changes what peers see moves the network's netmap epoch with
 * the device logged against it, exactly as a native change does, so every open map stream on
 * every instance notices it.
 */

import { withChanges } from '../../core/changes.js';
import {
  type DerpSettings,
  type DnsSettings,
  derpSettingsOf,
  dnsSettingsOf,
} from '../../modules/network/dns-derp-settings.js';
import { netmapEpoch } from '../../modules/network/epochs.js';
import type { Db } from '../../storage/database.js';

export interface NodeRow {
  id: string;
  network_id: string;
  name: string;
  hostname: string;
  os: string;
  node_key: string;
  machine_key: string | null;
  disco_key: string | null;
  endpoints: string;
  home_derp: number;
  hostinfo: string | null;
  user_id: string | null;
  user_login: string | null;
  user_display: string | null;
  /** `suspended`: the device may not connect until its user is restored. */
  user_status: string | null;
  tags: string;
  addr_index: number;
  created_at: number;
  last_seen_at: number | null;
  expires_at: number | null;
  ephemeral: number;
  protocol: string;
  /** 0 while the device waits for approval. */
  authorized: number;
  key_expired: number;
  key_expiry_disabled: number;
  client_version: string | null;
  flow_log_id: string | null;
}

const nodeColumns = [
  'devices.id',
  'devices.network_id',
  'devices.name',
  'devices.hostname',
  'devices.os',
  'devices.node_key',
  'devices.machine_key',
  'devices.disco_key',
  'devices.endpoints',
  'devices.home_derp',
  'devices.hostinfo',
  'devices.user_id',
  'users.login_name as user_login',
  'users.display_name as user_display',
  'users.status as user_status',
  'devices.tags',
  'devices.addr_index',
  'devices.created_at',
  'devices.last_seen_at',
  'devices.expires_at',
  'devices.ephemeral',
  'devices.protocol',
  'devices.authorized',
  'devices.key_expired',
  'devices.key_expiry_disabled',
  'devices.client_version',
  'devices.flow_log_id',
] as const;

const nodes = (db: Db) => db.selectFrom('devices').leftJoin('users', 'users.id', 'devices.user_id').select(nodeColumns);

/** The Tailscale-protocol device of this node key, if its machine key is this one. */
export async function nodeByKey(db: Db, nodeKey: string, machineKey: string): Promise<NodeRow | undefined> {
  return nodes(db)
    .where('devices.node_key', '=', nodeKey)
    .where('devices.machine_key', '=', machineKey)
    .executeTakeFirst();
}

export async function nodesByIds(db: Db, networkId: string, ids: readonly string[]): Promise<NodeRow[]> {
  if (ids.length === 0) return [];
  return nodes(db).where('devices.network_id', '=', networkId).where('devices.id', 'in', ids).execute();
}

/** What a map takes from the network itself: its name (the DNS domain) and whether it logs flows. */
export async function mapNetwork(
  db: Db,
  networkId: string,
): Promise<{ name: string; flowLogs: boolean; dns: DnsSettings; derp: DerpSettings }> {
  const row = await db
    .selectFrom('networks')
    .select(['name', 'flow_logs', 'dns_domain', 'dns', 'derp'])
    .where('id', '=', networkId)
    .executeTakeFirst();
  const network = row ?? { name: 'network', flow_logs: 0, dns_domain: null, dns: null, derp: null };
  return {
    name: network.name,
    flowLogs: Number(network.flow_logs) !== 0,
    dns: dnsSettingsOf(network),
    derp: derpSettingsOf(network),
  };
}

/** Keeps the public id of the device's flow log stream (set once; again if the secret changed). */
export async function storeFlowLogId(db: Db, node: NodeRow, publicId: string): Promise<void> {
  await db.updateTable('devices').set({ flow_log_id: publicId }).where('id', '=', node.id).execute();
  node.flow_log_id = publicId;
}

/** The device an upload's public log id names. */
export async function deviceByFlowLogId(
  db: Db,
  publicId: string,
): Promise<
  | { id: string; network_id: string; flow_log_id: string | null; flow_logs: number; user_status: string | null }
  | undefined
> {
  return db
    .selectFrom('devices')
    .innerJoin('networks', 'networks.id', 'devices.network_id')
    .leftJoin('users', 'users.id', 'devices.user_id')
    .select([
      'devices.id',
      'devices.network_id',
      'devices.flow_log_id',
      'networks.flow_logs',
      'users.status as user_status',
    ])
    .where('devices.flow_log_id', '=', publicId)
    .where('devices.protocol', '=', 'tailscale')
    .executeTakeFirst();
}

export interface Reported {
  discoKey: string;
  endpoints: string;
  homeDerp: number;
  hostinfo: string | null;
  hostname?: string;
  os?: string;
  clientVersion?: string;
}

/** Stores what a map request reported; returns whether anything peers see changed. */
export async function storeReport(db: Db, node: NodeRow, reported: Reported): Promise<boolean> {
  // What the device's record shows; unreported fields keep their value.
  const record = {
    hostname: reported.hostname ?? node.hostname,
    os: reported.os ?? node.os,
    client_version: reported.clientVersion ?? node.client_version,
  };
  const recordChanged =
    record.hostname !== node.hostname || record.os !== node.os || record.client_version !== node.client_version;
  const peersSee =
    node.disco_key !== reported.discoKey ||
    node.endpoints !== reported.endpoints ||
    node.home_derp !== reported.homeDerp ||
    recordChanged;
  if (!peersSee && (reported.hostinfo === null || reported.hostinfo === node.hostinfo)) return false;
  await withChanges(db, node.network_id, async (trx, changes) => {
    if (peersSee) await changes.touch(netmapEpoch, [node.id]);
    await trx
      .updateTable('devices')
      .set({
        disco_key: reported.discoKey,
        endpoints: reported.endpoints,
        home_derp: reported.homeDerp,
        ...record,
        ...(reported.hostinfo !== null && { hostinfo: reported.hostinfo }),
      })
      .where('id', '=', node.id)
      .execute();
  });
  Object.assign(node, {
    disco_key: reported.discoKey,
    endpoints: reported.endpoints,
    home_derp: reported.homeDerp,
    ...record,
    hostinfo: reported.hostinfo ?? node.hostinfo,
  });
  return peersSee;
}

/** A new node key for a device (`OldNodeKey` → `NodeKey`): its peers get the new key. */
export async function rotateNodeKey(db: Db, node: NodeRow, nodeKey: string): Promise<void> {
  await withChanges(db, node.network_id, async (trx, changes) => {
    await changes.touch(netmapEpoch, [node.id]);
    await trx.updateTable('devices').set({ node_key: nodeKey }).where('id', '=', node.id).execute();
  });
  node.node_key = nodeKey;
}

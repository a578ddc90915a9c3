/**
 * What the Tailscale protocol reads: the device a node key names, the rows its map is made of
 * (one query for all its peers), the network's map settings and the device an upload's flow
 * log id names. It writes nothing: what a device reports of itself is stored by
 * modules/devices/device-reports.ts, the owner of the `devices` table.
 */

import {
  type DerpSettings,
  type DnsSettings,
  derpSettingsOf,
  dnsSettingsOf,
} from '../../modules/network/dns-derp-settings.js';
import type { Db } from '../../storage/database.js';
import { notForIndex } from '../../storage/planner.js';

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

/**
 * Looked up by primary key (storage/planner.ts): on the network's index SQLite walked every
 * device of the network for each batch of a map round, which made a policy change's reads
 * grow with the square of the fleet.
 */
export async function nodesByIds(db: Db, networkId: string, ids: readonly string[]): Promise<NodeRow[]> {
  if (ids.length === 0) return [];
  return nodes(db)
    .where(notForIndex(db, 'devices.network_id'), '=', networkId)
    .where('devices.id', 'in', ids)
    .execute();
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

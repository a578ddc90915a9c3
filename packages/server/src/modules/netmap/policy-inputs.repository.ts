/**
 * What the policy engine needs to know about a network's users and devices, read from storage:
 * users by login with their role (autogroup:admin), devices by owner login, tags and addresses.
 */
import { parseList } from '../../lib/json.js';
import type { PolicyDevice, PolicyRole, PolicyUser } from '../../policy/index.js';
import type { Db } from '../../storage/database.js';
import { notForIndex } from '../../storage/planner.js';
import { addressesOf } from '../devices/addresses.js';

/**
 * How often the network-wide policy inputs were read in this process: counted so tests can
 * tell that a change read them once for every map built from it, not once per map.
 */
export const policyInputReads = { users: 0, identities: 0 };

export async function policyUsers(db: Db, networkId: string): Promise<PolicyUser[]> {
  policyInputReads.users++;
  const rows = await db
    .selectFrom('users')
    .select(['login_name', 'role'])
    .where('network_id', '=', networkId)
    .orderBy('login_name')
    .execute();
  return rows.map((r) => ({ login: r.login_name, role: r.role as PolicyRole }));
}

export interface DeviceIdentityRow {
  id: string;
  name: string;
  tags: string;
  addr_index: number;
  user_login: string | null;
}

/** Devices as the policy sees them, without routes (the caller adds the ones served as primary). */
export function policyDevice(row: DeviceIdentityRow, routes: string[] = []): PolicyDevice {
  return {
    id: row.id,
    user: row.user_login,
    tags: parseList(row.tags),
    addresses: addressesOf(Number(row.addr_index)),
    routes,
  };
}

/**
 * Identity rows of a network's devices (all of them, or the given ids), oldest first. With
 * `inNetmaps`, only devices that take part in netmaps: approved, and whose login has not
 * expired (devices/standing.ts); the others are in no one's view.
 */
export async function deviceIdentities(
  db: Db,
  networkId: string,
  ids?: readonly string[],
  options: { inNetmaps?: boolean } = {},
): Promise<DeviceIdentityRow[]> {
  policyInputReads.identities++;
  let query = db
    .selectFrom('devices')
    .leftJoin('users', 'users.id', 'devices.user_id')
    .select(['devices.id', 'devices.name', 'devices.tags', 'devices.addr_index', 'users.login_name as user_login'])
    .where(ids ? notForIndex(db, 'devices.network_id') : 'devices.network_id', '=', networkId);
  if (ids) {
    if (ids.length === 0) return [];
    query = query.where('devices.id', 'in', ids);
  }
  if (options.inNetmaps) query = query.where('devices.authorized', '=', 1).where('devices.key_expired', '=', 0);
  return query.orderBy('devices.created_at').orderBy('devices.id').execute();
}

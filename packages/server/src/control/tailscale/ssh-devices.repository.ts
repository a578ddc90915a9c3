/**
 * The two devices of a Tailscale SSH check (ssh-action.ts), each found by one probe of an index
 * whatever the network's size: the destination by its machine key (`devices (network_id,
 * machine_key, …)`, migration 043), the source by its address (`devices (network_id, addr_index)`).
 * The client names both by numeric id, a hash of the device's id that no index holds: the caller
 * checks it against the rows these find.
 */
import type { Db } from '../../storage/database.js';

/** The devices of this machine in the network (one, unless it enrolled again there). */
export function devicesOfMachineQuery(db: Db, networkId: string, machineKey: string) {
  return db
    .selectFrom('devices')
    .select(['id', 'network_id'])
    .where('network_id', '=', networkId)
    .where('machine_key', '=', machineKey);
}

/** The device holding the address of counter value `addrIndex` (modules/devices/addresses.ts). */
export function deviceAtQuery(db: Db, networkId: string, addrIndex: number) {
  return db.selectFrom('devices').select('id').where('network_id', '=', networkId).where('addr_index', '=', addrIndex);
}

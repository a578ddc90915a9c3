/**
 * The network's two epochs, which tell every instance's caches that something they hold may be
 * stale: the netmap epoch (who sees whom, and what of each other) and the presence epoch (who is
 * online). Everything that moves them is in this file. Changes declare what they touch to their
 * transaction (`changes.touch(netmapEpoch, [deviceId])`, core/changes.ts), which moves the epoch
 * once and logs the devices against it (netmap-changes.ts, presence-changes.ts). Every move
 * also signals the network in its transaction, so every process following it hears of the
 * change when it commits (storage/change-signal.ts); the PostgreSQL statement of presence
 * crossings signals in its own text (presence-crossings.ts).
 */
import { sql } from 'kysely';
import type { Changes, Epoch } from '../../core/changes.js';
import { pgNotifySql, signalChange } from '../../storage/change-signal.js';
import { type Db, isPostgres } from '../../storage/database.js';
import { netmapLog } from './netmap-changes.js';
import { presenceLog } from './presence-changes.js';

/**
 * Moves the netmap epoch without naming devices: instances holding older views rebuild them.
 * Changes go through netmapEpoch; tests use this to play another instance's unlogged move.
 */
export async function bumpNetmapEpoch(trx: Db, networkId: string): Promise<number> {
  const row = await trx
    .updateTable('networks')
    .set((eb) => ({ netmap_epoch: eb('netmap_epoch', '+', 1) }))
    .where('id', '=', networkId)
    .returning('netmap_epoch')
    .executeTakeFirstOrThrow();
  await signalChange(trx, networkId);
  return Number(row.netmap_epoch);
}

/**
 * Takes the network row's lock without moving an epoch, for a change that must read under the
 * lock before it knows whether it changes anything (a policy PUT of the text stored already
 * moves nothing, so no instance is told to look again).
 */
export async function lockNetworkRow(trx: Db, networkId: string): Promise<void> {
  await trx
    .updateTable('networks')
    .set((eb) => ({ netmap_epoch: eb.ref('netmap_epoch') }))
    .where('id', '=', networkId)
    .executeTakeFirstOrThrow();
}

/** As bumpNetmapEpoch, for the presence epoch. */
export async function bumpPresenceEpoch(db: Db, networkId: string): Promise<number> {
  const row = await db
    .updateTable('networks')
    .set((eb) => ({ presence_epoch: eb('presence_epoch', '+', 1) }))
    .where('id', '=', networkId)
    .returning('presence_epoch')
    .executeTakeFirstOrThrow();
  await signalChange(db, networkId);
  return Number(row.presence_epoch);
}

/** Every change that can alter some device's netmap touches this epoch. */
export const netmapEpoch: Epoch = {
  move: bumpNetmapEpoch,
  log: netmapLog.log,
  logInsertText: netmapLog.insertText,
  afterLog: netmapLog.prune,
};

/** A change that takes devices online or offline touches this epoch. */
export const presenceEpoch: Epoch = {
  move: bumpPresenceEpoch,
  log: presenceLog.log,
  logInsertText: presenceLog.insertText,
  afterLog: presenceLog.prune,
};

/**
 * On PostgreSQL, devices crossing online or offline move the presence epoch inside the one
 * statement that writes them (devices/presence-crossings.ts), so the row lock is held from the move to
 * the commit and not across round trips. These are that statement's common table expressions
 * for the move: when its CTE `crossed` (the devices that crossed, by `id`) has rows, `moved`
 * moves the epoch and returns it as `presence_epoch`, and `logged` logs the devices against it.
 */
export const presenceMoveCtes = (networkId: string) => sql`moved as (
    update networks set presence_epoch = presence_epoch + 1
    where id = ${networkId} and exists (select 1 from crossed) returning presence_epoch
  ), logged as (
    insert into presence_changes (network_id, epoch, device_id)
    select ${networkId}, moved.presence_epoch, crossed.id from moved cross join crossed
    on conflict do nothing
  )`;

/** What an enrollment reads of the network under the row lock its epoch moves take. */
export interface EnrollingNetwork {
  /**
   * The address index the move took for a new device (the network's counter now points past it);
   * a re-enrollment, which keeps its addresses, gives it back (network.repository.ts).
   */
  addrIndex: number;
  plan: string;
  deviceApproval: boolean;
  nodeKeyExpiry: string;
  name: string;
  /** The MagicDNS domain an admin set, else null (the name's default). */
  dnsDomain: string | null;
}

/**
 * A device enrolls (or re-enrolls): it changes netmaps and comes online, so both epochs move, in
 * one statement that also takes the next address index and reads the network's settings (on
 * PostgreSQL it signals the move too). The update locks the row (on PostgreSQL this serialises
 * the network's enrollments), so the plan and device settings it returns stay current until the
 * transaction ends, and no other enrollment sees the index it took. Every round trip from here to
 * the commit is time the network's other enrollments wait, which is why this is one statement.
 * The enrolled device is then named to `changes` for both epochs.
 */
export async function moveEpochsForEnrollment(trx: Db, networkId: string, changes: Changes): Promise<EnrollingNetwork> {
  const postgres = isPostgres(trx);
  const row = await trx
    .updateTable('networks')
    .set((eb) => ({
      netmap_epoch: eb('netmap_epoch', '+', 1),
      presence_epoch: eb('presence_epoch', '+', 1),
      next_addr_index: eb('next_addr_index', '+', 1),
    }))
    .where('id', '=', networkId)
    .returning([
      'netmap_epoch',
      'presence_epoch',
      'next_addr_index',
      'plan',
      'device_approval',
      'node_key_expiry',
      'name',
      'dns_domain',
    ])
    .$if(postgres, (qb) => qb.returning(pgNotifySql(networkId).as('signalled')))
    .executeTakeFirstOrThrow();
  if (!postgres) await signalChange(trx, networkId);
  changes.moved(netmapEpoch, Number(row.netmap_epoch));
  changes.moved(presenceEpoch, Number(row.presence_epoch));
  return {
    addrIndex: Number(row.next_addr_index) - 1,
    plan: row.plan,
    deviceApproval: Number(row.device_approval) !== 0,
    nodeKeyExpiry: row.node_key_expiry,
    name: row.name,
    dnsDomain: row.dns_domain,
  };
}

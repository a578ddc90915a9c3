/**
 * Device approval and login expiry, the admin's side: approve a waiting device, expire a
 * device's login now, turn its expiry off or on. Each change alters who appears in netmaps,
 * so it touches the netmap epoch with the device, like a re-tag.
 */
import type { DeviceBody, PatchDeviceRequest } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { invalidState, notFound } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import type { Db } from '../../storage/database.js';
import { netmapEpoch } from '../network/epochs.js';
import { deviceDetail } from './device-details.js';

async function standingOf(trx: Db, networkId: string, id: string) {
  const row = await trx
    .selectFrom('devices')
    .select(['authorized', 'key_expired', 'key_expiry_disabled'])
    .where('network_id', '=', networkId)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!row) throw notFound(`device ${id} does not exist`);
  return row;
}

/** POST /v1/devices/{id}/approve: 409 when the device is approved already. */
export async function approveDevice(ctx: AppContext, actor: Actor, id: string): Promise<DeviceBody> {
  const { networkId } = actor;
  return unitOfWork(ctx, actor, 'device.approve', async (trx, now, changes) => {
    if ((await standingOf(trx, networkId, id)).authorized !== 0) {
      throw invalidState(`device ${id} is approved already`);
    }
    await changes.touch(netmapEpoch, [id]);
    await trx.updateTable('devices').set({ authorized: 1 }).where('id', '=', id).execute();
    const device = await deviceDetail(trx, networkId, id, now);
    return { value: device, target: id, events: [{ type: 'device.approved', data: { device } }] };
  });
}

/**
 * Tailscale's `POST /device/{id}/authorized`: approving an approved device is no change (200,
 * no event); taking approval back puts the device out of every netmap until approved again.
 */
export async function setDeviceAuthorized(
  ctx: AppContext,
  actor: Actor,
  id: string,
  authorized: boolean,
): Promise<DeviceBody> {
  const { networkId } = actor;
  return unitOfWork(ctx, actor, authorized ? 'device.approve' : 'device.unapprove', async (trx, now, changes) => {
    const changed = ((await standingOf(trx, networkId, id)).authorized !== 0) !== authorized;
    if (changed) {
      await changes.touch(netmapEpoch, [id]);
      await trx
        .updateTable('devices')
        .set({ authorized: authorized ? 1 : 0 })
        .where('id', '=', id)
        .execute();
    }
    const device = await deviceDetail(trx, networkId, id, now);
    const type = authorized ? ('device.approved' as const) : ('device.updated' as const);
    return { value: device, target: id, events: changed ? [{ type, data: { device } }] : [] };
  });
}

/**
 * POST /v1/devices/{id}/expire: the login ends now, whatever its expiry setting; the device
 * must log in again. Expiring an expired device changes nothing and announces nothing.
 */
export async function expireDevice(ctx: AppContext, actor: Actor, id: string): Promise<DeviceBody> {
  const { networkId } = actor;
  return unitOfWork(ctx, actor, 'device.key_expire', async (trx, now, changes) => {
    const expired = (await standingOf(trx, networkId, id)).key_expired !== 0;
    if (!expired) {
      await changes.touch(netmapEpoch, [id]);
      await trx.updateTable('devices').set({ key_expired: 1, expires_at: now }).where('id', '=', id).execute();
    }
    const device = await deviceDetail(trx, networkId, id, now);
    const events = expired ? [] : [{ type: 'device.key_expired' as const, data: { device } }];
    return { value: device, target: id, events };
  });
}

/**
 * PATCH /v1/devices/{id}. Turning expiry off also lifts an expiry that already happened, as in
 * Tailscale: the device's login no longer expires, so it is back in netmaps at once.
 */
export async function updateDevice(
  ctx: AppContext,
  actor: Actor,
  id: string,
  body: PatchDeviceRequest,
): Promise<DeviceBody> {
  const { networkId } = actor;
  return unitOfWork(ctx, actor, 'device.update', async (trx, now, changes) => {
    const before = await standingOf(trx, networkId, id);
    const disabled = body.keyExpiryDisabled;
    const changed = disabled !== undefined && disabled !== (before.key_expiry_disabled !== 0);
    if (changed) {
      await changes.touch(netmapEpoch, [id]);
      await trx
        .updateTable('devices')
        .set(disabled ? { key_expiry_disabled: 1, key_expired: 0 } : { key_expiry_disabled: 0 })
        .where('id', '=', id)
        .execute();
    }
    const device = await deviceDetail(trx, networkId, id, now);
    const events = changed ? [{ type: 'device.updated' as const, data: { device } }] : [];
    return { value: device, target: id, events };
  });
}

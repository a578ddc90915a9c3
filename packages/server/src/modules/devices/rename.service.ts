/**
 * Renaming a device (Tailscale API v2's `POST /device/{id}/name`). A name is a DNS label,
 * unique in the network: it is the device's MagicDNS name and what peers call it, so a
 * rename touches the netmap epoch with the device, like a re-tag. An empty name gives the
 * device back a name made from its hostname, as enrollment would.
 *
 * A name made from the hostname follows it: when a device reports a new hostname (`tailscale
 * set --hostname`), a device still named after its old one is named after the new one, as
 * Tailscale and Headscale do; a name someone gave it stays.
 */
import type { DeviceBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError, invalidRequest } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { netmapEpoch } from '../network/epochs.js';
import { nameBase, nameOf } from './addresses.js';
import { deviceDetail } from './device-details.js';
import { allocateName } from './enrollment.service.js';

const LABEL_RE = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The label a requested name asks for: lower case, its MagicDNS domain (if any) taken off. */
function labelOf(requested: string, dnsDomain: string): string {
  const lower = requested.trim().toLowerCase().replace(/\.$/, '');
  const label = lower.endsWith(`.${dnsDomain}`) ? lower.slice(0, -dnsDomain.length - 1) : lower;
  if (!LABEL_RE.test(label)) {
    throw invalidRequest(
      `"${requested}" is not a device name: use one DNS label (letters, digits and dashes, at most 63), optionally followed by .${dnsDomain}`,
    );
  }
  return label;
}

function conflict(name: string): ApiError {
  return new ApiError('conflict', `another device of this network is named "${name}"`);
}

/** Unique violations, as either database reports one (a rename racing another to the same name). */
const isUniqueViolation = (error: unknown) =>
  /unique/i.test(String((error as { code?: unknown }).code ?? '')) || (error as { code?: unknown }).code === '23505';

export async function renameDevice(ctx: AppContext, actor: Actor, id: string, requested: string): Promise<DeviceBody> {
  const { networkId } = actor;
  try {
    return await unitOfWork(ctx, actor, 'device.rename', async (trx, now, changes) => {
      const before = await deviceDetail(trx, networkId, id, now);
      const dnsDomain = (before.dnsName ?? '').slice(before.name.length + 1);
      let name: string;
      let seq = 0;
      if (requested.trim() === '') {
        const base = nameBase(before.hostname);
        // Already named after its hostname: nothing to give back.
        const suffix = before.name.startsWith(`${base}-`) ? before.name.slice(base.length + 1) : undefined;
        if (before.name === base || (suffix !== undefined && /^[1-9][0-9]*$/.test(suffix))) {
          return { value: before, target: id, unchanged: true };
        }
        ({ name, seq } = await allocateName(trx, networkId, base));
      } else {
        name = labelOf(requested, dnsDomain);
        if (name === before.name) return { value: before, target: id, unchanged: true };
        const taken = await trx
          .selectFrom('devices')
          .select('id')
          .where('network_id', '=', networkId)
          .where('name', '=', name)
          .executeTakeFirst();
        if (taken) throw conflict(name);
      }
      await changes.touch(netmapEpoch, [id]);
      // The new name is a base of its own: a later device with that hostname becomes `name-1`.
      const base = seq === 0 ? name : nameBase(before.hostname);
      await trx.updateTable('devices').set({ name, name_base: base, name_seq: seq }).where('id', '=', id).execute();
      const device = await deviceDetail(trx, networkId, id, now);
      return { value: device, target: id, events: [{ type: 'device.updated', data: { device } }] };
    });
  } catch (error) {
    if (!(error instanceof ApiError) && isUniqueViolation(error)) throw conflict(requested);
    throw error;
  }
}

/**
 * Names the device after its new hostname when its name was made from `previousHostname` (its
 * base is that hostname's and it is `base` or `base-N`): otherwise someone named it, and the
 * name stays. Audited as a rename by the device itself; peers see the new name.
 */
export async function followHostname(
  ctx: AppContext,
  actor: Actor,
  id: string,
  previousHostname: string,
): Promise<void> {
  await unitOfWork(ctx, actor, 'device.rename', async (trx, now, changes) => {
    const row = await trx
      .selectFrom('devices')
      .select(['name', 'name_base', 'name_seq', 'hostname'])
      .where('id', '=', id)
      .where('network_id', '=', actor.networkId)
      .executeTakeFirst();
    if (!row) return { value: undefined, target: id, unchanged: true };
    const base = nameBase(row.hostname);
    if (
      row.name_base !== nameBase(previousHostname) ||
      row.name !== nameOf(row.name_base, Number(row.name_seq)) ||
      base === row.name_base
    ) {
      return { value: undefined, target: id, unchanged: true };
    }
    // The network's row lock first (taken by the epoch move), so no enrollment or other rename
    // takes the name between the choice and the write.
    await changes.touch(netmapEpoch, [id]);
    const { name, seq } = await allocateName(trx, actor.networkId, base);
    await trx.updateTable('devices').set({ name, name_base: base, name_seq: seq }).where('id', '=', id).execute();
    const device = await deviceDetail(trx, actor.networkId, id, now);
    return { value: undefined, target: id, events: [{ type: 'device.updated', data: { device } }] };
  });
}

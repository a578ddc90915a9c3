/**
 * The network's device settings (PATCH /v1/network): whether new devices wait for approval,
 * and how long a device's login lasts. Both apply from the next enrollment on, as in
 * Tailscale: turning approval on leaves approved devices approved, and a new lifetime applies
 * to logins made after the change.
 */
import { MAX_KEY_LIFETIME_MS, type PatchNetworkRequest, parseDuration } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError, invalidDuration } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { describeNetwork } from './network.service.js';

/** Milliseconds of a login under `nodeKeyExpiry`: 0 is never; else a duration up to 365d. */
export function nodeKeyLifetime(text: string): number {
  if (text === '0') return 0;
  const ms = parseDuration(text);
  if (ms === undefined) throw invalidDuration(text);
  if (ms <= 0 || ms > MAX_KEY_LIFETIME_MS) {
    throw new ApiError('invalid_duration', `nodeKeyExpiry must be 0 (never) or from 1s to 365d (got "${text}")`);
  }
  return ms;
}

/** `redirectUri`: the single sign-on callback the answer names (see describeNetwork). */
export async function updateNetworkSettings(
  ctx: AppContext,
  actor: Actor,
  body: PatchNetworkRequest,
  redirectUri: string | null,
) {
  const { networkId } = actor;
  if (body.nodeKeyExpiry !== undefined) nodeKeyLifetime(body.nodeKeyExpiry);
  return unitOfWork(ctx, actor, 'network.update', async (trx) => {
    const changes = {
      ...(body.deviceApproval === undefined ? {} : { device_approval: body.deviceApproval ? 1 : 0 }),
      ...(body.nodeKeyExpiry === undefined ? {} : { node_key_expiry: body.nodeKeyExpiry }),
    };
    if (Object.keys(changes).length > 0) {
      await trx.updateTable('networks').set(changes).where('id', '=', networkId).execute();
    }
    return { value: await describeNetwork(trx, networkId, redirectUri, ctx.settings), target: networkId };
  });
}

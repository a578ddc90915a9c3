/**
 * The network's device settings (PATCH /v1/network): whether new devices wait for approval,
 * and how long a device's login lasts. Both apply from the next enrollment on, as in
 * Tailscale: turning approval on leaves approved devices approved, and a new lifetime applies
 * to logins made after the change. Flow logs (`flowLogs`), DNS (`dns`) and relays (`derp`) are
 * part of every Tailscale client's map, so changing them moves the netmap epoch and connected
 * clients follow at once.
 */
import { MAX_KEY_LIFETIME_MS, type PatchNetworkRequest, parseDuration } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError, invalidDuration } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { dnsDerpUpdate } from './dns-derp-settings.js';
import { netmapEpoch } from './epochs.js';
import { describeNetwork } from './network.service.js';

/**
 * Milliseconds of a login under `nodeKeyExpiry`: `0` is never; else a duration of the contract's
 * grammar up to 365d. Only the bare `0` means never, as in Headscale's settings: `0s` or `0d`
 * reads as "expire at once" as much as "never", so it is refused rather than guessed at, and so
 * are Go's and Prometheus's compound spellings (`24h0m0s`, `1w`): one grammar for every duration.
 */
export function nodeKeyLifetime(text: string): number {
  if (text === '0') return 0;
  const ms = parseDuration(text);
  if (ms === undefined) throw invalidDuration(text, 'nodeKeyExpiry');
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
  return unitOfWork(ctx, actor, 'network.update', async (trx, _now, changes) => {
    // DNS and relays are part of every Tailscale client's map, as flow logs are.
    const inMaps = body.flowLogs !== undefined || body.dns !== undefined || body.derp !== undefined;
    // Declared before anything else, as every netmap change takes the network's row lock first
    // (which also keeps two merges of dns or derp from losing one another's fields).
    if (inMaps) await changes.touch(netmapEpoch);
    const current =
      body.dns || body.derp
        ? await trx
            .selectFrom('networks')
            .select(['name', 'dns_domain', 'dns', 'derp'])
            .where('id', '=', networkId)
            .executeTakeFirstOrThrow()
        : undefined;
    const settings = {
      ...(body.deviceApproval === undefined ? {} : { device_approval: body.deviceApproval ? 1 : 0 }),
      ...(body.nodeKeyExpiry === undefined ? {} : { node_key_expiry: body.nodeKeyExpiry }),
      ...(body.flowLogs === undefined ? {} : { flow_logs: body.flowLogs ? 1 : 0 }),
      ...(current ? dnsDerpUpdate(current, body) : {}),
    };
    if (Object.keys(settings).length > 0) {
      await trx.updateTable('networks').set(settings).where('id', '=', networkId).execute();
    }
    return { value: await describeNetwork(trx, networkId, redirectUri, ctx.settings), target: networkId };
  });
}

/**
 * Tailscale's tailnet settings over Warren's network settings: device approval, the device
 * key duration and network flow logging are real (`PATCH /v1/network` underneath, scope `all`); every other setting
 * reads as off, and asking to turn one on is a 400 naming it, never accepted and ignored.
 * Go's client sends the two ACL fields on every update, as `null` when unset.
 */

import { parseDuration } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { actorOf } from '../../edge/actor.js';
import { keptDerivation } from '../../lib/kept.js';
import { deviceSettingsOf, type NetworkRecord, networkRecord } from '../../modules/network/network.service.js';
import { updateNetworkSettings } from '../../modules/network/settings.service.js';
import { invalidRequest } from '../problem.js';
import { redirectUriIfKnown } from '../public-url.js';
import { tailnetOf } from './tailnet.js';

const hide = { hide: true };
const config = { scope: 'all' as const, tailscaleScope: 'feature_settings' as const };
const DAY_MS = 86_400_000;
/** Settings Warren does not have: their off value, which is all an update may ask for. */
const ABSENT: Record<string, unknown> = {
  aclsExternallyManagedOn: false,
  aclsExternalLink: '',
  devicesAutoUpdatesOn: false,
  usersApprovalOn: false,
  usersRoleAllowedToJoinExternalTailnets: 'none',
  regionalRoutingOn: false,
  postureIdentityCollectionOn: false,
  httpsEnabled: false,
};

function settingsOf(network: { deviceApproval: boolean; nodeKeyExpiry: string; flowLogs: boolean }) {
  const ms = network.nodeKeyExpiry === '0' ? 0 : (parseDuration(network.nodeKeyExpiry) ?? 0);
  return {
    ...ABSENT,
    devicesApprovalOn: network.deviceApproval,
    // Whole days, rounded up: a lifetime under a day is 1, never the 0 that stands for "never".
    devicesKeyDurationDays: Math.ceil(ms / DAY_MS),
    networkFlowLoggingOn: network.flowLogs,
    routeSelection: 'active-passive-failover',
  };
}

/**
 * The settings' body, made once per kept network row (lib/kept.ts), not per call: a change of
 * any setting is a new row.
 */
const keptSettings = keptDerivation(([network]: readonly [NetworkRecord]) => ({
  value: settingsOf(deviceSettingsOf(network)),
  until: Number.POSITIVE_INFINITY,
}));

type Patch = {
  devicesApprovalOn?: boolean | null;
  devicesKeyDurationDays?: number | null;
  networkFlowLoggingOn?: boolean | null;
} & Record<string, unknown>;

const SETTABLE = new Set(['devicesApprovalOn', 'devicesKeyDurationDays', 'networkFlowLoggingOn']);

export async function tailscaleSettingsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;

  app.get<{ Params: { tailnet: string } }>('/tailnet/:tailnet/settings', { config, schema: hide }, async (request) =>
    keptSettings([await networkRecord(ctx.db, tailnetOf(request), request.principal!.readStamp)], ctx.clock.now()),
  );

  app.patch<{ Params: { tailnet: string }; Body: Patch }>(
    '/tailnet/:tailnet/settings',
    { config, schema: hide },
    async (request) => {
      tailnetOf(request);
      const body = (request.body ?? {}) as Patch;
      if (typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('send the settings as a JSON object');
      for (const [field, value] of Object.entries(body)) {
        if (SETTABLE.has(field) || value === null) continue;
        if (field in ABSENT && value === ABSENT[field]) continue;
        if (field === 'routeSelection' && value === 'active-passive-failover') continue;
        throw invalidRequest(`Warren has no setting "${field}" that can be set to ${JSON.stringify(value)}`);
      }
      const days = body.devicesKeyDurationDays;
      if (days != null && (!Number.isInteger(days) || days < 1 || days > 180)) {
        throw invalidRequest(
          `devicesKeyDurationDays must be a whole number of days from 1 to 180 (got ${JSON.stringify(days)})`,
        );
      }
      for (const field of ['devicesApprovalOn', 'networkFlowLoggingOn'] as const) {
        if (body[field] != null && typeof body[field] !== 'boolean')
          throw invalidRequest(`${field} must be true or false`);
      }
      const network = await updateNetworkSettings(
        ctx,
        actorOf(request),
        {
          ...(body.devicesApprovalOn != null ? { deviceApproval: body.devicesApprovalOn } : {}),
          ...(days != null ? { nodeKeyExpiry: `${days}d` } : {}),
          ...(body.networkFlowLoggingOn != null ? { flowLogs: body.networkFlowLoggingOn } : {}),
        },
        redirectUriIfKnown(request),
      );
      return settingsOf(network);
    },
  );
}

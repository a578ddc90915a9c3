/**
 * Networks are the tenants: their plan, the row GET /v1/network shows and how many there are.
 * Creating one, with what it starts with, is modules/tenants/.
 */

import { PLANS, type Plan } from '@warren/contract';
import type { Settings } from '../../core/context.js';
import { keptDerivation } from '../../lib/kept.js';
import { innerMap } from '../../lib/nested-maps.js';
import { compiledQuery, type ReadStamp } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { derpSettingsOf, dnsSettingsOf } from './dns-derp-settings.js';
import { updatePlan } from './network.repository.js';
import { limitsOf, logRetentionDays } from './plans.js';

export async function setPlan(db: Db, networkId: string, plan: Plan): Promise<boolean> {
  if (!PLANS.includes(plan)) throw new Error(`unknown plan "${plan}" (use ${PLANS.join(' or ')})`);
  return updatePlan(db, networkId, plan);
}

export async function countNetworks(db: Db): Promise<number> {
  const row = await db
    .selectFrom('networks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

const nameById = compiledQuery(
  (db, p: { id: string }) => db.selectFrom('networks').select(['id', 'name']).where('id', '=', p.id),
  { stampedBy: 'id' },
);

/** A network's id and name (`GET /v1/me` shows them on every call): built once. */
export async function networkName(db: Db, networkId: string, stamp?: ReadStamp): Promise<{ id: string; name: string }> {
  const [row] = await nameById(db, { id: networkId }, stamp);
  if (!row) throw new Error(`network ${networkId} does not exist`);
  return row;
}

/** The network row, as `GET /v1/network` reads it on every call: built once (storage/compiled-query.ts). */
const networkById = compiledQuery(
  (db, p: { id: string }) =>
    db
      .selectFrom('networks')
      .leftJoin('sso_configs', 'sso_configs.network_id', 'networks.id')
      .selectAll('networks')
      .select(['sso_configs.network_id as sso_network', 'sso_configs.enforce as sso_enforce'])
      .where('networks.id', '=', p.id),
  { stampedBy: 'id' },
);

export type NetworkRecord = Awaited<ReturnType<typeof networkById>>[number];

/**
 * The network's row as networkById keeps it: the same frozen object for every call until the
 * row changes (storage/compiled-query.ts), so answers derived from it can be kept with it
 * (lib/kept.ts).
 */
export async function networkRecord(db: Db, networkId: string, stamp?: ReadStamp): Promise<NetworkRecord> {
  const [network] = await networkById(db, { id: networkId }, stamp);
  if (!network) throw new Error(`network ${networkId} does not exist`);
  return network;
}

/** A network's device settings as GET /v1/network and Tailscale's tailnet settings read them. */
export const deviceSettingsOf = (
  network: Pick<NetworkRecord, 'device_approval' | 'node_key_expiry' | 'flow_logs'>,
) => ({
  deviceApproval: network.device_approval !== 0,
  nodeKeyExpiry: network.node_key_expiry,
  flowLogs: network.flow_logs !== 0,
});

/** What GET /v1/network shows beside the row: the server's, the same for every call. */
interface Shown {
  redirectUri: string | null;
  settings: Partial<Settings>;
}

/** One frozen Shown per settings object and redirect URI, so a kept body can be keyed by it. */
const shownBySettings = new WeakMap<Partial<Settings>, Map<string | null, Shown>>();

function shownOf(redirectUri: string | null, settings: Partial<Settings>): Shown {
  const bySettings = innerMap(shownBySettings, settings, Map);
  let shown = bySettings.get(redirectUri);
  if (!shown) {
    shown = Object.freeze({ redirectUri, settings });
    bySettings.set(redirectUri, shown);
  }
  return shown;
}

/**
 * The body, made once per kept network row (lib/kept.ts), so its text is written once too
 * (http/serializers.ts): presenting and serialising it on every call cost about as much as the
 * rest of the call's own work. Nothing in it follows the clock; a change is a new row.
 */
const keptBody = keptDerivation(([network, { redirectUri, settings }]: readonly [NetworkRecord, Shown]) => ({
  value: {
    id: network.id,
    name: network.name,
    plan: network.plan as Plan,
    limits: { ...limitsOf(network.plan), logRetentionDays: logRetentionDays(network.plan, settings) },
    // Kept by triggers in the same transaction as every insert and delete (migration 009).
    usage: { users: Number(network.user_count), devices: Number(network.device_count) },
    ...deviceSettingsOf(network),
    dns: dnsSettingsOf(network),
    derp: derpSettingsOf(network),
    sso: { configured: network.sso_network !== null, enforce: network.sso_enforce === 1, redirectUri },
  },
  until: Number.POSITIVE_INFINITY,
}));

/**
 * The network as GET /v1/network shows it. `redirectUri` is where the identity provider sends
 * people back: an administrator registers it with the provider before setting single sign-on
 * up (null while the server has no public URL, without which single sign-on cannot work).
 */
export async function describeNetwork(
  db: Db,
  networkId: string,
  redirectUri: string | null,
  settings: Partial<Settings> = {},
  stamp?: ReadStamp,
) {
  const network = await networkRecord(db, networkId, stamp);
  return keptBody([network, shownOf(redirectUri, settings)], 0);
}

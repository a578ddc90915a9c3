/**
 * Networks are the tenants. Creating one makes its owner user, its default policy and its
 * first API key (scope `all`, 90 days) in one transaction; the key's secret is returned once.
 */

import { DEFAULT_KEY_LIFETIME, PLANS, type Plan, parseDuration } from '@warren/contract';
import type { Settings } from '../../core/context.js';
import { newId } from '../../lib/ids.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { DEFAULT_POLICY, policyEtag } from '../../policy/index.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import { compiledQuery } from '../../storage/compiled-query.js';
import type { Db } from '../../storage/database.js';
import { derpSettingsOf, dnsSettingsOf } from './dns-derp-settings.js';
import { updatePlan } from './network.repository.js';
import { limitsOf, logRetentionDays } from './plans.js';

export interface CreateNetworkInput {
  name: string;
  ownerEmail: string;
  plan: Plan;
  now: number;
}

export interface CreatedNetwork {
  networkId: string;
  apiKey: string;
  keyId: string;
}

export async function createNetwork(db: Db, input: CreateNetworkInput): Promise<CreatedNetwork> {
  return db.transaction().execute((trx) => createNetworkIn(trx, input));
}

/** What the first `warren serve` creates: the network and the login name of its owner. */
export const FIRST_NETWORK = { name: 'default', ownerEmail: 'admin@example.com' } as const;

/**
 * The first `warren serve` on an empty database creates the network "default". The lock
 * keeps two instances starting at once on one PostgreSQL database from making two.
 */
export async function bootstrapIfEmpty(db: Db, now: number): Promise<CreatedNetwork | undefined> {
  return db.transaction().execute(async (trx) => {
    await advisoryLock(trx, 'bootstrap');
    if ((await countNetworks(trx)) > 0) return undefined;
    return createNetworkIn(trx, { ...FIRST_NETWORK, plan: 'premium', now });
  });
}

async function createNetworkIn(trx: Db, input: CreateNetworkInput): Promise<CreatedNetwork> {
  if (!PLANS.includes(input.plan)) throw new Error(`unknown plan "${input.plan}" (use ${PLANS.join(' or ')})`);
  const networkId = newId('network');
  const ownerId = newId('user');
  const keyId = newId('key');
  const apiKey = generateSecret('api');
  const { now } = input;
  await trx
    .insertInto('networks')
    .values({ id: networkId, name: input.name, plan: input.plan, created_at: now, next_addr_index: 1, netmap_epoch: 0 })
    .execute();
  await trx
    .insertInto('users')
    .values({
      id: ownerId,
      network_id: networkId,
      login_name: input.ownerEmail,
      display_name: input.ownerEmail.split('@')[0] ?? input.ownerEmail,
      role: 'owner',
      status: 'active',
      created_at: now,
      last_seen_at: null,
    })
    .execute();
  await trx
    .insertInto('policies')
    .values({
      id: newId('policy'),
      network_id: networkId,
      version: 1,
      text: DEFAULT_POLICY,
      etag: policyEtag(DEFAULT_POLICY),
      created_at: now,
      created_by: 'warren init',
    })
    .execute();
  await trx
    .insertInto('keys')
    .values({
      id: keyId,
      network_id: networkId,
      type: 'api',
      secret_hash: hashSecret(apiKey),
      name: 'initial',
      description: 'first key of the network, made by warren init',
      scopes: JSON.stringify(['all']),
      reusable: 0,
      ephemeral: 0,
      tags: '[]',
      user_id: null,
      rate_limit: null,
      created_at: now,
      expires_at: now + (parseDuration(DEFAULT_KEY_LIFETIME) as number),
      revoked_at: null,
      used_at: null,
      uses: 0,
      last_used_at: null,
      created_by: 'warren init',
    })
    .execute();
  return { networkId, apiKey, keyId };
}

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

/** The network row, as `GET /v1/network` reads it on every call: built once (storage/compiled-query.ts). */
const networkById = compiledQuery((db, p: { id: string }) =>
  db
    .selectFrom('networks')
    .leftJoin('sso_configs', 'sso_configs.network_id', 'networks.id')
    .selectAll('networks')
    .select(['sso_configs.network_id as sso_network', 'sso_configs.enforce as sso_enforce'])
    .where('networks.id', '=', p.id),
);

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
) {
  const [network] = await networkById(db, { id: networkId });
  if (!network) throw new Error(`network ${networkId} does not exist`);
  return {
    id: network.id,
    name: network.name,
    plan: network.plan as Plan,
    limits: { ...limitsOf(network.plan), logRetentionDays: logRetentionDays(network.plan, settings) },
    // Kept by triggers in the same transaction as every insert and delete (migration 009).
    usage: { users: Number(network.user_count), devices: Number(network.device_count) },
    deviceApproval: network.device_approval !== 0,
    nodeKeyExpiry: network.node_key_expiry,
    flowLogs: network.flow_logs !== 0,
    dns: dnsSettingsOf(network),
    derp: derpSettingsOf(network),
    sso: { configured: network.sso_network !== null, enforce: network.sso_enforce === 1, redirectUri },
  };
}

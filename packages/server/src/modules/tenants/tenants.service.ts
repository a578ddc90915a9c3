/**
 * A network and what it starts with: its owner user, its default policy and its first API key
 * (scope `all`, 90 days), made in one transaction; the key's secret is returned once. Each row
 * is written by the folder that owns its table; this folder only puts them together, which is
 * why it stands above all of them.
 */

import { DEFAULT_KEY_LIFETIME, PLANS, type Plan, parseDuration } from '@warren/contract';
import { newId } from '../../lib/ids.js';
import { generateSecret, hashSecret } from '../../lib/secrets.js';
import { DEFAULT_POLICY, policyEtag } from '../../policy/index.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import type { Db } from '../../storage/database.js';
import { insertPolicyVersion } from '../acl/acl.repository.js';
import { insertKey } from '../keys/keys.repository.js';
import { insertNetwork } from '../network/network.repository.js';
import { countNetworks } from '../network/network.service.js';
import { insertUser } from '../users/users.repository.js';

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
  const keyId = newId('key');
  const apiKey = generateSecret('api');
  const { now } = input;
  await insertNetwork(trx, { id: networkId, name: input.name, plan: input.plan, now });
  await insertUser(trx, {
    id: newId('user'),
    network_id: networkId,
    login_name: input.ownerEmail,
    display_name: input.ownerEmail.split('@')[0] ?? input.ownerEmail,
    role: 'owner',
    status: 'active',
    created_at: now,
    last_seen_at: null,
  });
  const createdBy = 'warren init';
  await insertPolicyVersion(trx, {
    networkId,
    version: 1,
    text: DEFAULT_POLICY,
    etag: policyEtag(DEFAULT_POLICY),
    now,
    createdBy,
  });
  await insertKey(trx, {
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
    created_by: createdBy,
  });
  return { networkId, apiKey, keyId };
}

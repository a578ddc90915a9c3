/**
 * Interactive login of a Tailscale client (`tailscale up` without an auth key): the client is
 * given `{public URL}/register/{token}` (single use, 15 minutes) and waits; a signed-in person
 * opens it in the console, sees the machine (name, OS, key) and approves it. The device then
 * enrolls as theirs, with every rule of an auth key's enrollment (plan limit, suspended user,
 * tagOwners for the tags the client asked for, the network's device approval).
 *
 * Who may do what follows the role table: anyone signed in may log in a machine as themselves;
 * logging one in for another user is what an auth key made for that user does, so it takes the
 * `keys` scope (owner, admin, it-admin). A device logged in by someone who may approve devices
 * (`devices` scope) needs no further approval; a member's waits when the network asks for it.
 */
import type { MachineLoginBody, Scope } from '@warren/contract';
import type { Actor } from '../../../core/actor.js';
import type { AppContext } from '../../../core/context.js';
import { insufficientScope, invalidState, notFound } from '../../../core/errors.js';
import { parseList } from '../../../lib/json.js';
import { hashSecret } from '../../../lib/secrets.js';
import type { Db } from '../../../storage/database.js';
import { deviceOfMachineQuery, enrollForUser } from '../enrollment.service.js';
import { signalLoginEnded } from './login-signals.js';
import {
  endMachineLogin,
  type MachineLoginRow,
  machineLoginByHash,
  setLoginDevice,
} from './machine-logins.repository.js';
import { tagRefusal } from './tag-owners.js';

export const MACHINE_LOGIN_LIFETIME_MS = 15 * 60_000;

export type MachineLoginState = MachineLoginBody['state'];

const has = (actor: Actor, scope: Scope) => {
  const scopes = actor.grant?.scopes ?? [];
  return scopes.includes('all') || scopes.includes(scope);
};

export function stateOf(row: MachineLoginRow, now: number): MachineLoginState {
  if (row.approved_at !== null) return row.refusal === null ? 'approved' : 'refused';
  return row.expires_at <= now ? 'expired' : 'pending';
}

async function loginOf(db: Db, token: string): Promise<MachineLoginRow> {
  const row = await machineLoginByHash(db, hashSecret(token));
  if (!row) throw notFound('this login URL is unknown; run `tailscale up` again for a new one');
  return row;
}

/** The device of the node key the machine held before, if it is in this network. */
async function renewedDevice(
  db: Db,
  viewer: Actor,
  row: MachineLoginRow,
): Promise<{ id: string; name: string } | null> {
  // Enrollment renews a device only for its own user (enrollment.service.ts, reEnrolled), so the
  // page names one only when it is the viewer's: approved by anyone else, the machine becomes a
  // new device.
  const device = row.old_node_key
    ? await db
        .selectFrom('devices')
        .select(['id', 'name', 'user_id'])
        .where('network_id', '=', viewer.networkId)
        .where('node_key', '=', row.old_node_key)
        .where('machine_key', '=', row.machine_key)
        .executeTakeFirst()
    : // After `tailscale logout` the client forgot its node key and names no old one: a login
      // as its user renews the device this machine enrolled last.
      await deviceOfMachineQuery(db, viewer.networkId, row.machine_key).select('name').executeTakeFirst();
  return device && device.user_id === viewer.id ? { id: device.id, name: device.name } : null;
}

export async function describeMachineLogin(ctx: AppContext, actor: Actor, token: string): Promise<MachineLoginBody> {
  const row = await loginOf(ctx.db, token);
  const sameNetwork = row.network_id === null || row.network_id === actor.networkId;
  return {
    state: stateOf(row, ctx.clock.now()),
    hostname: row.hostname,
    os: row.os,
    clientVersion: row.client_version,
    machineKey: row.machine_key,
    nodeKey: row.node_key,
    requestedTags: parseList(row.request_tags),
    ephemeral: row.ephemeral !== 0,
    created: new Date(row.created_at).toISOString(),
    expires: new Date(row.expires_at).toISOString(),
    renews: await renewedDevice(ctx.db, actor, row),
    deviceId: sameNetwork ? row.device_id : null,
    refusal: sameNetwork ? row.refusal : null,
    mayChooseUser: has(actor, 'keys'),
  };
}

/** Who the device will belong to: the approver, or (with `keys`) another active user of the network. */
async function ownerFor(ctx: AppContext, actor: Actor, user: string | undefined): Promise<string> {
  if (!actor.id || actor.type !== 'user') throw invalidState('only a signed-in person can approve a machine login');
  if (user === undefined || user === actor.id || user === actor.name) return actor.id;
  if (!has(actor, 'keys')) throw insufficientScope('keys');
  const row = await ctx.db
    .selectFrom('users')
    .select(['id', 'status'])
    .where('network_id', '=', actor.networkId)
    .where((eb) => eb.or([eb('id', '=', user), eb('login_name', '=', user.toLowerCase())]))
    .executeTakeFirst();
  if (!row) throw notFound(`user ${user} does not exist`);
  if (row.status !== 'active') throw invalidState(`user ${user} is suspended; restore them first`);
  return row.id;
}

function refuseEnded(row: MachineLoginRow, now: number): void {
  const state = stateOf(row, now);
  if (state === 'expired') {
    throw invalidState('this login URL expired (they last 15 minutes); run `tailscale up` again for a new one');
  }
  if (state !== 'pending')
    throw invalidState('this login URL was already used; run `tailscale up` again for a new one');
}

/**
 * Approves the machine of this login for `user` (default: the approver). Tags the client asked
 * for that the user does not own refuse it for good: the waiting client is told why.
 */
export async function approveMachineLogin(
  ctx: AppContext,
  actor: Actor,
  token: string,
  input: { user?: string },
): Promise<{ deviceId: string }> {
  const row = await loginOf(ctx.db, token);
  refuseEnded(row, ctx.clock.now());
  const userId = await ownerFor(ctx, actor, input.user);
  const tags = parseList(row.request_tags);
  const tokenHash = row.token_hash;
  if (tags.length > 0) {
    const refusal = await tagRefusal(ctx, actor.networkId, userId, tags);
    if (refusal) {
      const ended = await endMachineLogin(ctx.db, tokenHash, ctx.clock.now(), {
        approvedBy: actor.id!,
        networkId: actor.networkId,
        refusal,
      });
      if (ended) await signalLoginEnded(ctx.db, tokenHash);
      throw invalidState(refusal);
    }
  }
  const enrolled = await enrollForUser(
    ctx,
    actor,
    {
      networkId: actor.networkId,
      userId,
      tags,
      ephemeral: row.ephemeral !== 0,
      preApproved: has(actor, 'devices'),
      claim: async (trx, now) => {
        const claimed = await endMachineLogin(trx, tokenHash, now, {
          approvedBy: actor.id!,
          networkId: actor.networkId,
        });
        // The waiting client hears of it when the enrollment commits, its device in place.
        if (claimed) return signalLoginEnded(trx, tokenHash);
        refuseEnded((await machineLoginByHash(trx, tokenHash)) ?? row, now);
        throw invalidState('this login URL was already used; run `tailscale up` again for a new one');
      },
    },
    {
      hostname: row.hostname,
      os: row.os,
      nodeKey: row.node_key,
      ...(row.client_version && { clientVersion: row.client_version }),
    },
    // A machine logging in again (its login expired, or --force-reauth) renews its own device.
    { machineKey: row.machine_key, ...(row.old_node_key && { previousNodeKey: row.old_node_key }) },
  );
  await setLoginDevice(ctx.db, tokenHash, enrolled.device.id);
  return { deviceId: enrolled.device.id };
}

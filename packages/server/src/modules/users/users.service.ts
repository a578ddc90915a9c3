/**
 * User rules: roles come from a fixed list (the request schemas refuse any other), login names
 * are unique per network, the plan's seat limit holds, and a network always keeps at least one
 * owner. Deleting a user removes their devices; API and auth keys are independent of users and
 * stay.
 */
import { type CreateUserRequest, type Role, roleScopesBeyond, type UserBody } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { ApiError, invalidRequest, invalidState, notFound, planLimit } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { newId } from '../../lib/ids.js';
import { advisoryLock } from '../../storage/advisory-lock.js';
import type { Db } from '../../storage/database.js';
import { deletionEvents, removeDevices } from '../devices/device-removal.js';
import { disconnectDevicesOf } from '../devices/presence.service.js';
import { netmapEpoch } from '../network/epochs.js';
import { planOf } from '../network/network.repository.js';
import { limitsOf } from '../network/plans.js';
import { endUserSessions } from '../sessions/sessions.store.js';
import { presentUser } from './users.presenter.js';
import { countUsers, findUser, insertUser } from './users.repository.js';

const LOGIN_NAME = /^[^\s@]+@[^\s@]+$/;

async function requireUser(db: Db, networkId: string, id: string) {
  const user = await findUser(db, networkId, id);
  if (!user) throw notFound(`user ${id} does not exist`);
  return user;
}

/**
 * A person gives a role from their console session only when their own role holds every scope
 * of it, and takes one away, suspends, restores or removes its holder likewise: an it-admin
 * manages members, auditors and other it-admins, but neither makes anyone an owner, admin or
 * network-admin (themselves included) nor demotes, suspends or removes one. API keys follow the
 * contract's scope table, where `users` suffices for every user call: a key is not a person and
 * has no role to stay within (docs/decisions/console.md says what that leaves open), and
 * offboarding by SCIM must reach everyone (the last owner excepted).
 */
function requireGrantsRole(actor: Actor, role: Role, verb: string): void {
  if (actor.type !== 'user' || !actor.grant) return;
  const beyond = roleScopesBeyond(actor.grant.scopes, role);
  if (beyond.length > 0) {
    const lacks = beyond.map((s) => `"${s}"`).join(', ');
    throw new ApiError('insufficient_scope', `only a caller with ${lacks} may ${verb} the role ${role}`, {
      scope: beyond[0]!,
    });
  }
}

async function presentById(db: Db, networkId: string, id: string): Promise<UserBody> {
  return presentUser(await requireUser(db, networkId, id));
}

/**
 * A new user, active unless `status` says otherwise: SCIM may provision a person already
 * deactivated, which is then one change (one user.created), not a creation and a suspension.
 */
export async function createUser(
  ctx: AppContext,
  actor: Actor,
  input: CreateUserRequest,
  status: 'active' | 'suspended' = 'active',
): Promise<UserBody> {
  const { networkId } = actor;
  const loginName = input.loginName.trim().toLowerCase();
  if (!LOGIN_NAME.test(loginName))
    throw invalidRequest(`"${input.loginName}" is not a login name: use an email address`);
  const role = input.role ?? 'member';
  requireGrantsRole(actor, role, 'give');
  return unitOfWork(ctx, actor, 'user.create', async (trx, now) => {
    await advisoryLock(trx, `seats:${networkId}`);
    const plan = await planOf(trx, networkId);
    const seats = limitsOf(plan).users;
    if (seats !== null && (await countUsers(trx, networkId)) >= seats) {
      throw planLimit(`the ${plan} plan allows ${seats} users; remove one or change the plan`);
    }
    const taken = await trx
      .selectFrom('users')
      .select('id')
      .where('network_id', '=', networkId)
      .where('login_name', '=', loginName)
      .executeTakeFirst();
    if (taken) throw new ApiError('conflict', `a user with login name "${loginName}" already exists (${taken.id})`);
    const id = newId('user');
    await insertUser(trx, {
      id,
      network_id: networkId,
      login_name: loginName,
      display_name: input.displayName ?? defaultDisplayName(loginName),
      role,
      status,
      created_at: now,
      last_seen_at: null,
    });
    const user = await presentById(trx, networkId, id);
    return { value: user, target: id, events: [{ type: 'user.created', data: { user } }] };
  });
}

/** What PATCH /v1/users/{id} may change; the body schema has checked every value. */
export interface UserChange {
  role?: Role;
  displayName?: string;
  status?: 'active' | 'suspended';
}

export async function updateUser(ctx: AppContext, actor: Actor, id: string, input: UserChange): Promise<UserBody> {
  const { networkId } = actor;
  const { role, status } = input;
  return unitOfWork(ctx, actor, 'user.update', async (trx, _now, changes) => {
    await advisoryLock(trx, `owners:${networkId}`);
    const user = await requireUser(trx, networkId, id);
    if (role && role !== user.role) {
      requireGrantsRole(actor, user.role as Role, 'take away');
      requireGrantsRole(actor, role, 'give');
    }
    if (status && status !== user.status) {
      requireGrantsRole(
        actor,
        user.role as Role,
        status === 'suspended' ? 'suspend a holder of' : 'restore a holder of',
      );
    }
    const losesOwner = user.role === 'owner' && ((role && role !== 'owner') || status === 'suspended');
    if (losesOwner && (await countActiveOwners(trx, networkId, id)) === 0) {
      throw invalidState(
        `user ${id} is the last active owner of the network; make another user owner before demoting or suspending them`,
      );
    }
    const fields = {
      ...(role ? { role } : {}),
      ...(status ? { status } : {}),
      ...(input.displayName !== undefined ? { display_name: input.displayName } : {}),
    };
    if (Object.keys(fields).length > 0) {
      await trx.updateTable('users').set(fields).where('id', '=', id).where('network_id', '=', networkId).execute();
      // Roles feed autogroup:admin, so every netmap may change (no device named: views rebuild).
      if (role && role !== user.role) await changes.touch(netmapEpoch);
    }
    // A new role or a suspension ends the person's console sessions at once.
    if ((role && role !== user.role) || (status && status !== user.status)) await endUserSessions(trx, id);
    if (status === 'suspended' && user.status !== 'suspended') await disconnectDevicesOf(trx, changes, networkId, id);
    const after = await presentById(trx, networkId, id);
    // One event per transition: a PATCH that sets what the user already has emits none.
    const changed =
      (role !== undefined && role !== user.role) ||
      (status !== undefined && status !== user.status) ||
      (input.displayName !== undefined && input.displayName !== user.display_name);
    const events = changed ? [{ type: 'user.updated' as const, data: { user: after } }] : [];
    return { value: after, target: id, events };
  });
}

export async function deleteUser(ctx: AppContext, actor: Actor, id: string): Promise<void> {
  const { networkId } = actor;
  await unitOfWork(ctx, actor, 'user.delete', async (trx, now, changes) => {
    await advisoryLock(trx, `owners:${networkId}`);
    const user = await requireUser(trx, networkId, id);
    requireGrantsRole(actor, user.role as Role, 'remove a holder of');
    if (user.role === 'owner' && (await countActiveOwners(trx, networkId, id)) === 0) {
      throw invalidState(`user ${id} is the last active owner of the network and cannot be removed`);
    }
    const devices = await trx
      .selectFrom('devices')
      .select('id')
      .where('network_id', '=', networkId)
      .where('user_id', '=', id)
      .execute();
    const deviceIds = devices.map((d) => d.id);
    const before = presentUser(user);
    const events = await deletionEvents(trx, networkId, deviceIds, now);
    await removeDevices(trx, changes, networkId, deviceIds);
    await endUserSessions(trx, id);
    // removeDevices moved the netmap epoch if the user had devices; a user without devices is
    // in nobody's view, so nothing else changes.
    await trx.deleteFrom('users').where('id', '=', id).where('network_id', '=', networkId).execute();
    events.push({ type: 'user.deleted', data: { user: before } });
    return { value: undefined, target: id, events };
  });
}

/** Owners other than `exceptId` who can still sign in: a network always keeps one. */
async function countActiveOwners(db: Db, networkId: string, exceptId: string): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('network_id', '=', networkId)
    .where('role', '=', 'owner')
    .where('status', '=', 'active')
    .where('id', '!=', exceptId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The display name of a user created without one: the login name's local part. */
export function defaultDisplayName(loginName: string): string {
  return loginName.split('@')[0] || loginName;
}

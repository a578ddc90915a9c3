/**
 * Tailscale SSH under a `check` rule: the destination's client holds the connection and asks
 * Warren (control/tailscale/ssh-action.ts); unless the same source device was confirmed for the
 * same destination and local user within the rule's check period, the person connecting is
 * shown `{public URL}/ssh-check/{token}` (10 minutes, single use), where the source device's
 * owner, signed in to the console, confirms the session; the held connection then proceeds.
 * Only that owner may confirm: the check asks the person behind the source device to prove who
 * they are again, so no other user, whatever their role, can answer for them.
 */
import { randomBytes } from 'node:crypto';
import type { SshCheckBody } from '@warren/contract';
import type { Actor } from '../../../core/actor.js';
import type { AppContext } from '../../../core/context.js';
import { invalidState, notFound } from '../../../core/errors.js';
import { unitOfWork } from '../../../core/unit-of-work.js';
import { parseList } from '../../../lib/json.js';
import { hashSecret } from '../../../lib/secrets.js';
import { onSshCheckEnded, signalSshCheckEnded } from './login-signals.js';
import {
  confirmedSince,
  confirmSshCheck,
  insertSshCheck,
  type SshCheckRow,
  sshCheckByHash,
} from './ssh-checks.repository.js';
import { waitForEnd } from './wait-for-end.js';

export const SSH_CHECK_LIFETIME_MS = 10 * 60_000;

export interface SshCheckPair {
  networkId: string;
  srcDeviceId: string;
  dstDeviceId: string;
  localUser: string;
  /** The rule's check period (0: every connection asks). */
  periodMs: number;
}

/** A confirmation of the pair still in force, or a new check and the token of its URL. */
export async function sshCheckFor(
  ctx: AppContext,
  pair: SshCheckPair,
): Promise<{ confirmed: true } | { token: string }> {
  const now = ctx.clock.now();
  const row = {
    network_id: pair.networkId,
    src_device_id: pair.srcDeviceId,
    dst_device_id: pair.dstDeviceId,
    local_user: pair.localUser,
  };
  if (pair.periodMs > 0 && (await confirmedSince(ctx.db, row, now - pair.periodMs))) return { confirmed: true };
  const token = randomBytes(32).toString('base64url');
  await insertSshCheck(ctx.db, {
    ...row,
    token_hash: hashSecret(token),
    period_ms: pair.periodMs,
    created_at: now,
    expires_at: now + SSH_CHECK_LIFETIME_MS,
  });
  return { token };
}

export type SshCheckState = SshCheckBody['state'];

function stateOf(row: SshCheckRow, now: number): SshCheckState {
  if (row.approved_at !== null) return 'approved';
  return row.expires_at <= now ? 'expired' : 'pending';
}

/**
 * Waits until the check of `token`, held by the destination `dstDeviceId`, is confirmed or
 * expires; 'closed' when the client went away first, 'unknown' for a token that is not a check
 * of that device.
 */
export async function awaitSshCheck(
  ctx: AppContext,
  token: string,
  dstDeviceId: string,
  closed: Promise<void>,
): Promise<SshCheckState | 'closed' | 'unknown'> {
  const tokenHash = hashSecret(token);
  return waitForEnd<SshCheckState | 'closed' | 'unknown'>({
    listen: (wake) => onSshCheckEnded(ctx.changes, tokenHash, wake),
    closed,
    now: () => ctx.clock.now(),
    look: async (gone) => {
      const row = await sshCheckByHash(ctx.db, tokenHash);
      if (!row || row.dst_device_id !== dstDeviceId) return { done: 'unknown' };
      const state = stateOf(row, ctx.clock.now());
      if (state !== 'pending') return { done: state };
      return gone ? { done: 'closed' } : { expiresAt: row.expires_at };
    },
  });
}

interface CheckDevice {
  id: string;
  name: string;
  user_id: string | null;
  tags: string;
  owner: string | null;
}

async function deviceOf(ctx: AppContext, networkId: string, id: string): Promise<CheckDevice | undefined> {
  return ctx.db
    .selectFrom('devices')
    .leftJoin('users', 'users.id', 'devices.user_id')
    .select(['devices.id', 'devices.name', 'devices.user_id', 'devices.tags', 'users.login_name as owner'])
    .where('devices.network_id', '=', networkId)
    .where('devices.id', '=', id)
    .executeTakeFirst();
}

/** The check of this token in the viewer's network, with both its devices. */
async function checkOf(ctx: AppContext, actor: Actor, token: string) {
  const row = await sshCheckByHash(ctx.db, hashSecret(token));
  const unknown = () => notFound('this SSH check URL is unknown; connect again for a new one');
  if (!row || row.network_id !== actor.networkId) throw unknown();
  const [source, destination] = await Promise.all([
    deviceOf(ctx, row.network_id, row.src_device_id),
    deviceOf(ctx, row.network_id, row.dst_device_id),
  ]);
  if (!source || !destination) throw unknown();
  // Only a person, and only the one whose untagged device the connection comes from.
  const owned = parseList(source.tags).length === 0;
  const mayApprove = owned && actor.type === 'user' && actor.id !== undefined && source.user_id === actor.id;
  return { row, source, destination, mayApprove, owner: owned ? source.owner : null };
}

function bodyOf(check: Awaited<ReturnType<typeof checkOf>>, now: number): SshCheckBody {
  const { row, source, destination, mayApprove, owner } = check;
  return {
    state: stateOf(row, now),
    source: { id: source.id, name: source.name, owner },
    destination: { id: destination.id, name: destination.name },
    localUser: row.local_user,
    periodSeconds: Math.round(row.period_ms / 1000),
    created: new Date(row.created_at).toISOString(),
    expires: new Date(row.expires_at).toISOString(),
    mayApprove,
  };
}

export async function describeSshCheck(ctx: AppContext, actor: Actor, token: string): Promise<SshCheckBody> {
  return bodyOf(await checkOf(ctx, actor, token), ctx.clock.now());
}

/**
 * What the audit entry of a confirmation names: both devices, the local user and the period a
 * confirmation holds. The entry has one `target`, and a confirmation is no resource with an id
 * of its own (its token is the URL's secret), so the target says all of it.
 */
export function sshCheckTarget(row: Pick<SshCheckRow, 'src_device_id' | 'dst_device_id' | 'local_user' | 'period_ms'>) {
  return `${row.src_device_id} -> ${row.dst_device_id} as ${row.local_user} for ${Math.round(row.period_ms / 1000)}s`;
}

/**
 * Confirms the session, audited as `ssh_check.approve` (the confirming person, and the pair in
 * its target) in the transaction that confirms it; the held connection proceeds when this
 * commits. A refused confirmation changes nothing and is recorded as any refused call is.
 */
export async function approveSshCheck(ctx: AppContext, actor: Actor, token: string): Promise<SshCheckBody> {
  const check = await checkOf(ctx, actor, token);
  const now = ctx.clock.now();
  if (!check.mayApprove) {
    throw invalidState(
      `only ${check.owner ?? 'the owner of the source device'}, signed in, can confirm an SSH session from ${check.source.name}`,
    );
  }
  const state = stateOf(check.row, now);
  if (state === 'expired') throw invalidState('this SSH check expired (they last 10 minutes); connect again');
  if (state === 'approved') throw invalidState('this SSH session was already confirmed');
  const tokenHash = check.row.token_hash;
  const approvedAt = await unitOfWork(ctx, actor, 'ssh_check.approve', async (trx, at) => {
    if (!(await confirmSshCheck(trx, tokenHash, at, actor.id!))) {
      throw invalidState('this SSH session was already confirmed, or its check expired');
    }
    // The waiting connection hears of it when the confirmation commits.
    await signalSshCheckEnded(trx, tokenHash);
    return { value: at, target: sshCheckTarget(check.row) };
  });
  return bodyOf({ ...check, row: { ...check.row, approved_at: approvedAt, approved_by: actor.id! } }, approvedAt);
}

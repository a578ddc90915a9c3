/**
 * The policy's `autoApprovers`: a pending route whose prefix they allow for its device becomes
 * approved at once (`autoApproved: true`, approvedBy `autoApprovers`). Runs inside the caller's
 * transaction — when a device advertises new routes, and when a new policy is stored — so the
 * approvals commit with the change that caused them; its unit of work audits and announces them.
 *
 * Only `pending` routes are considered: a route an admin disabled stays disabled.
 */
import { autoApproves, type CompiledPolicy } from '../../policy/index.js';
import type { Db } from '../../storage/database.js';
import { deviceIdentities, policyDevice, policyUsers } from '../netmap/policy-inputs.repository.js';

const AUTO_APPROVER = 'autoApprovers';

export interface AutoApproval {
  routeId: string;
  deviceId: string;
  prefix: string;
}

const hasAutoApprovers = (policy: CompiledPolicy) =>
  policy.autoApprovers.routes.length > 0 || policy.autoApprovers.exitNode.length > 0;

/** Approves the pending routes (of the whole network, or the given ids) that the policy allows. */
export async function autoApprovePending(
  trx: Db,
  networkId: string,
  policy: CompiledPolicy,
  now: number,
  routeIds?: readonly string[],
): Promise<AutoApproval[]> {
  if (!hasAutoApprovers(policy) || routeIds?.length === 0) return [];
  let query = trx
    .selectFrom('routes')
    .select(['id', 'device_id', 'prefix'])
    .where('network_id', '=', networkId)
    .where('state', '=', 'pending');
  if (routeIds) query = query.where('id', 'in', routeIds);
  const pending = await query.orderBy('created_at').orderBy('id').execute();
  if (pending.length === 0) return [];
  // One connection inside a transaction: queries run one after the other.
  const devices = await deviceIdentities(trx, networkId, [...new Set(pending.map((r) => r.device_id))]);
  const users = await policyUsers(trx, networkId);
  const byId = new Map(devices.map((d) => [d.id, policyDevice(d)]));
  const approved: AutoApproval[] = [];
  for (const route of pending) {
    const device = byId.get(route.device_id);
    if (device && autoApproves(policy, route.prefix, device, users)) {
      approved.push({ routeId: route.id, deviceId: route.device_id, prefix: route.prefix });
    }
  }
  for (let i = 0; i < approved.length; i += 500) {
    await trx
      .updateTable('routes')
      .set({ state: 'approved', auto_approved: 1, approved_at: now, approved_by: AUTO_APPROVER })
      .where(
        'id',
        'in',
        approved.slice(i, i + 500).map((a) => a.routeId),
      )
      .where('state', '=', 'pending')
      .execute();
  }
  return approved;
}

/**
 * Approves what the policy allows among routes a device just advertised for the first time.
 * `now` is the time of the call that advertised them (their `created_at`). The caller's unit
 * of work audits each as `route.approve` and announces it.
 */
export async function autoApproveAdvertised(
  trx: Db,
  networkId: string,
  routeIds: readonly string[],
  policy: CompiledPolicy,
  now: number,
): Promise<AutoApproval[]> {
  if (!hasAutoApprovers(policy) || routeIds.length === 0) return [];
  return autoApprovePending(trx, networkId, policy, now, routeIds);
}

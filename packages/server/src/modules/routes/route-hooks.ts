/**
 * Hook points of the route lifecycle, called inside the transaction that made the change.
 *
 * onRoutesAdvertised: called with the ids of routes a device just advertised for the first
 * time (state `pending`) and the time of that call. The policy's `autoApprovers` approve those
 * they allow at once (state `approved`, autoApproved, approvedBy `autoApprovers`), within `trx`;
 * the caller's unit of work audits and announces them with its change. The caller has already
 * bumped the network's netmap epoch.
 */
import type { Db } from '../../storage/database.js';
import { policyInTransaction } from '../acl/policy-cache.js';
import { type AutoApproval, autoApproveAdvertised } from './auto-approve.js';

export async function onRoutesAdvertised(
  trx: Db,
  networkId: string,
  deviceId: string,
  newRouteIds: readonly string[],
  now: number,
): Promise<AutoApproval[]> {
  if (newRouteIds.length === 0) return [];
  const policy = await policyInTransaction(trx, networkId);
  return autoApproveAdvertised(trx, networkId, newRouteIds, policy.compiled, now);
}

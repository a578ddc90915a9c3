/**
 * Hook points of the route lifecycle, called inside the transaction that made the change.
 *
 * onRoutesAdvertised: called with the ids of routes a device just advertised for the first
 * time (state `pending`) and the time of that call. The policy's `autoApprovers` approve those
 * they allow at once (state `approved`, autoApproved, approvedBy `autoApprovers`), each audited
 * as `route.approve`, all within `trx` so the change and its audit entries commit together.
 * The caller has already bumped the network's netmap epoch.
 */
import type { Db } from '../../storage/database.js';
import { autoApproveAdvertised } from '../acl/auto-approve.js';
import { policyInTransaction } from '../acl/policy-cache.js';

export async function onRoutesAdvertised(
  trx: Db,
  networkId: string,
  deviceId: string,
  newRouteIds: readonly string[],
  now: number,
): Promise<void> {
  if (newRouteIds.length === 0) return;
  const policy = await policyInTransaction(trx, networkId);
  await autoApproveAdvertised(trx, networkId, deviceId, newRouteIds, policy.compiled, now);
}

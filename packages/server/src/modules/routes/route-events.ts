/**
 * The events and extra audit entries of routes a change advertised or approved on the way
 * (a heartbeat or enrollment advertising routes, a policy whose autoApprovers approve some).
 */
import type { EventDraft } from '../../core/events.js';
import type { Db } from '../../storage/database.js';
import { presentRoute } from './routes.presenter.js';
import { findRoute } from './routes.repository.js';

export async function routeEvents(
  trx: Db,
  networkId: string,
  now: number,
  routes: { advertised?: readonly string[]; approved?: readonly string[] },
): Promise<EventDraft[]> {
  const events: EventDraft[] = [];
  const add = async (ids: readonly string[] | undefined, type: 'route.advertised' | 'route.approved') => {
    for (const id of ids ?? []) {
      const row = await findRoute(trx, networkId, now, id);
      if (row) events.push({ type, data: { route: presentRoute(row) } });
    }
  };
  await add(routes.advertised, 'route.advertised');
  await add(routes.approved, 'route.approved');
  return events;
}

/** The audit entries of routes the policy approved (`route.approve`, one per route). */
export const approvalEntries = (approved: readonly string[]) =>
  approved.map((target) => ({ action: 'route.approve', target }));

/**
 * Route transitions: pending → approved, approved → disabled, disabled → approved. Each is
 * one conditional UPDATE, so two admins racing cannot both succeed on a stale state; a
 * transition whose condition does not hold is 409 invalid_state. Approval stamps approvedAt
 * (re-approval too, so a re-approved route queues behind the others of its prefix for
 * primary) and approvedBy (the API key's name); disabling keeps both for the record.
 * A route over a reserved range, recorded before such prefixes were refused at advertise
 * time, can no longer be approved (reserved-prefixes.ts).
 */
import type { EventType, RouteBody, RouteState } from '@warren/contract';
import type { Actor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import { invalidState, notFound } from '../../core/errors.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import { netmapEpoch } from '../network/epochs.js';
import { storedPrefixReason } from './reserved-prefixes.js';
import { presentRoute } from './routes.presenter.js';
import { findRoute } from './routes.repository.js';

interface Transition {
  from: RouteState[];
  to: RouteState;
  action: string;
  event: EventType;
  verb: string;
}

const APPROVE: Transition = {
  from: ['pending', 'disabled'],
  to: 'approved',
  action: 'route.approve',
  event: 'route.approved',
  verb: 'approved',
};
const DISABLE: Transition = {
  from: ['approved'],
  to: 'disabled',
  action: 'route.disable',
  event: 'route.disabled',
  verb: 'disabled',
};

async function transition(ctx: AppContext, actor: Actor, id: string, t: Transition): Promise<RouteBody> {
  const { networkId } = actor;
  return unitOfWork(ctx, actor, t.action, async (trx, now, changes) => {
    // The network row first, as every transaction that moves the epoch does (no lock cycles);
    // the route's device is named once it is known.
    await changes.touch(netmapEpoch);
    const stamp = t.to === 'approved' ? { approved_at: now, approved_by: actor.name, auto_approved: 0 } : {};
    const result = await trx
      .updateTable('routes')
      .set({ state: t.to, ...stamp })
      .where('network_id', '=', networkId)
      .where('id', '=', id)
      .where('state', 'in', t.from)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) {
      const current = await trx
        .selectFrom('routes')
        .select('state')
        .where('network_id', '=', networkId)
        .where('id', '=', id)
        .executeTakeFirst();
      if (!current) throw notFound(`route ${id} does not exist`);
      throw invalidState(`route ${id} is ${current.state}; only ${t.from.join(' or ')} routes can be ${t.verb}`);
    }
    const row = await findRoute(trx, networkId, now, id);
    await changes.touch(netmapEpoch, [row!.device_id]);
    const reserved = t.to === 'approved' ? storedPrefixReason(row!.prefix) : undefined;
    if (reserved) throw invalidState(`route ${id} (${row!.prefix}) cannot be approved: it ${reserved}`);
    const route = presentRoute(row!);
    return { value: route, target: id, events: [{ type: t.event, data: { route } }] };
  });
}

export const approveRoute = (ctx: AppContext, actor: Actor, id: string) => transition(ctx, actor, id, APPROVE);
export const disableRoute = (ctx: AppContext, actor: Actor, id: string) => transition(ctx, actor, id, DISABLE);

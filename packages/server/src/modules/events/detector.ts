/**
 * Transitions that no call makes: a device going online or offline (time passing, not a
 * request, takes it offline) and a key nearing or passing its expiry. A periodic pass finds
 * them and claims each with a conditional upsert on its `announcements` row, inside the unit
 * of work that writes the event: with several instances looking at once, only the one whose
 * claim changed the row emits, so each transition is announced exactly once.
 */

import { systemActor } from '../../core/actor.js';
import type { AppContext } from '../../core/context.js';
import type { EventDraft } from '../../core/events.js';
import { unitOfWork } from '../../core/unit-of-work.js';
import type { Db } from '../../storage/database.js';
import { deviceDetails } from '../devices/device-details.js';
import { presentKey } from '../keys/keys.presenter.js';
import { onlineWhere } from '../network/online.js';

/** key.expiring is sent this long before a key expires. */
export const EXPIRING_NOTICE_MS = 24 * 3_600_000;
const BATCH = 500;

type Transition = { subject: string; state: string; type: EventDraft['type'] };

/**
 * Claims the moves of `subjects` to `state` from one of `from` ('' : nothing announced yet),
 * returning those this call moved, so this caller announces them. Set-based, a statement per
 * 500 subjects, so a fleet coming online costs a few statements, not a few per device. On
 * PostgreSQL a concurrent claim waits for this one's row locks (or its unique keys) and then
 * finds nothing to change.
 */
async function claimAll(
  trx: Db,
  networkId: string,
  subjects: readonly string[],
  state: string,
  from: readonly string[],
): Promise<Set<string>> {
  const claimed = new Set<string>();
  const moveFrom = from.filter((s) => s !== '');
  for (let start = 0; start < subjects.length; start += 500) {
    const chunk = subjects.slice(start, start + 500);
    if (moveFrom.length > 0) {
      const moved = await trx
        .updateTable('announcements')
        .set({ state })
        .where('subject', 'in', chunk)
        .where('state', 'in', moveFrom)
        .returning('subject')
        .execute();
      for (const row of moved) claimed.add(row.subject);
    }
    if (!from.includes('')) continue;
    const fresh = chunk.filter((subject) => !claimed.has(subject));
    if (fresh.length === 0) continue;
    const inserted = await trx
      .insertInto('announcements')
      .values(fresh.map((subject) => ({ subject, network_id: networkId, state })))
      .onConflict((oc) => oc.column('subject').doNothing())
      .returning('subject')
      .execute();
    for (const row of inserted) claimed.add(row.subject);
  }
  return claimed;
}

/**
 * Announces each network's transitions in one unit of work per network: claims per target
 * state, then the records of what was claimed in one read (`dataOf`), events in found order.
 */
async function announce(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  found: { network_id: string; transition: Transition }[],
  dataOf: (
    trx: Db,
    networkId: string,
    subjects: string[],
    now: number,
  ) => Promise<Map<string, Record<string, unknown>>>,
): Promise<number> {
  const byNetwork = new Map<string, Transition[]>();
  for (const { network_id, transition } of found) {
    const list = byNetwork.get(network_id);
    if (list) list.push(transition);
    else byNetwork.set(network_id, [transition]);
  }
  let announced = 0;
  for (const [networkId, all] of byNetwork) {
    for (let start = 0; start < all.length; start += UNIT) {
      // Small units with a turn of the event loop between them: on SQLite each statement
      // holds the loop, and a fleet's catch-up must not stall the API for its whole batch.
      if (start > 0) await new Promise((resolve) => setImmediate(resolve));
      announced += await announceUnit(ctx, networkId, all.slice(start, start + UNIT), dataOf);
    }
  }
  return announced;
}

/** Transitions announced per unit of work. */
const UNIT = 100;

async function announceUnit(
  ctx: Pick<AppContext, 'db' | 'clock'>,
  networkId: string,
  transitions: Transition[],
  dataOf: Parameters<typeof announce>[2],
): Promise<number> {
  return await unitOfWork(ctx, systemActor(networkId, 'detector'), null, async (trx, now) => {
    const claimed = new Set<string>();
    for (const state of new Set(transitions.map((t) => t.state))) {
      const subjects = transitions.filter((t) => t.state === state).map((t) => t.subject);
      for (const subject of await claimAll(trx, networkId, subjects, state, FROM[state] ?? [])) claimed.add(subject);
    }
    const chosen = transitions.filter((t) => claimed.has(t.subject));
    const data = await dataOf(
      trx,
      networkId,
      chosen.map((t) => t.subject),
      now,
    );
    // A subject deleted since it was found has no record left to announce.
    const events: EventDraft[] = chosen.flatMap((t) => {
      const record = data.get(t.subject);
      return record ? [{ type: t.type, data: record }] : [];
    });
    return { value: events.length, target: null, events, unchanged: events.length === 0 };
  });
}

/** The states each announced state may follow ('' : nothing announced yet). */
const FROM: Record<string, readonly string[]> = {
  online: ['', 'offline'],
  offline: ['online'],
  expiring: [''],
  expired: ['', 'expiring'],
};

/** Devices whose presence differs from what was last announced. */
export async function detectPresence(ctx: Pick<AppContext, 'db' | 'clock'>): Promise<number> {
  const now = ctx.clock.now();
  const cameOnline = await ctx.db
    .selectFrom('devices')
    .leftJoin('announcements', 'announcements.subject', 'devices.id')
    .select(['devices.id', 'devices.network_id'])
    .where((eb) => onlineWhere(eb, now, true))
    .where((eb) => eb.or([eb('announcements.state', 'is', null), eb('announcements.state', '<>', 'online')]))
    .limit(BATCH)
    .execute();
  const wentOffline = await ctx.db
    .selectFrom('announcements')
    .innerJoin('devices', 'devices.id', 'announcements.subject')
    .select(['devices.id', 'devices.network_id'])
    .where('announcements.state', '=', 'online')
    .where((eb) => onlineWhere(eb, now, false))
    .limit(BATCH)
    .execute();
  const found = [
    ...cameOnline.map((d) => ({
      network_id: d.network_id,
      transition: { subject: d.id, state: 'online', type: 'device.online' as const },
    })),
    ...wentOffline.map((d) => ({
      network_id: d.network_id,
      transition: { subject: d.id, state: 'offline', type: 'device.offline' as const },
    })),
  ];
  return announce(ctx, found, async (trx, networkId, ids, at) => {
    const details = await deviceDetails(trx, networkId, ids, at);
    return new Map([...details].map(([id, device]) => [id, { device }]));
  });
}

/**
 * Keys within a day of expiry (key.expiring) or past it (key.expired), once each. Not a revoked
 * key, nor a single-use auth key that was used: either stopped working already, and its state
 * stays what stopped it (keyState), so neither is ever "expired".
 */
export async function detectKeyExpiry(ctx: Pick<AppContext, 'db' | 'clock'>): Promise<number> {
  const now = ctx.clock.now();
  const rows = await ctx.db
    .selectFrom('keys')
    .leftJoin('announcements', 'announcements.subject', 'keys.id')
    .select(['keys.id', 'keys.network_id', 'keys.expires_at', 'announcements.state'])
    .where('keys.revoked_at', 'is', null)
    .where((eb) => eb.or([eb('keys.used_at', 'is', null), eb('keys.reusable', '=', 1), eb('keys.type', '=', 'api')]))
    .where('keys.expires_at', '<=', now + EXPIRING_NOTICE_MS)
    .where((eb) => eb.or([eb('announcements.state', 'is', null), eb('announcements.state', '=', 'expiring')]))
    .limit(BATCH)
    .execute();
  const found = rows
    .filter((row) => row.expires_at <= now || row.state == null)
    .map((row) => {
      const expired = row.expires_at <= now;
      return {
        network_id: row.network_id,
        transition: {
          subject: row.id,
          state: expired ? 'expired' : 'expiring',
          type: expired ? ('key.expired' as const) : ('key.expiring' as const),
        },
      };
    });
  return announce(ctx, found, async (trx, networkId, ids, at) => {
    const keys = ids.length
      ? await trx.selectFrom('keys').selectAll().where('network_id', '=', networkId).where('id', 'in', ids).execute()
      : [];
    return new Map(keys.map((key) => [key.id, { key: presentKey(key, at) }]));
  });
}

/** Forgets the announcements of devices and keys that no longer exist. */
export async function forgetGone(db: Db): Promise<void> {
  await db
    .deleteFrom('announcements')
    .where((eb) =>
      eb.and([
        eb('subject', 'not in', eb.selectFrom('devices').select('id')),
        eb('subject', 'not in', eb.selectFrom('keys').select('id')),
      ]),
    )
    .execute();
}

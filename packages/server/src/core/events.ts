/**
 * The outbox. Events are written by the unit of work, in the transaction of their change and
 * after its audit entry (whose lock makes `seq` order commit order within a network), so a
 * reader tailing with a cursor and the webhook fan-out never skip one that commits late.
 */
import { EVENT_FILTER_PATTERN, EVENT_TYPES, type EventBody, type EventType } from '@warren/contract';
import type { Insertable, Selectable } from 'kysely';
import { newId } from '../lib/ids.js';
import { iso } from '../lib/time.js';
import type { Db } from '../storage/database.js';
import type { EventsTable } from '../storage/schema-events.js';
import { type Actor, actorRef } from './actor.js';
import { invalidRequest } from './errors.js';

/** An event as a service states it: its type and the record(s) after the change. */
export interface EventDraft {
  type: EventType;
  data: Record<string, unknown>;
  /** Only this webhook endpoint receives it (webhook.test). */
  webhookId?: string;
}

/** The outbox rows of one change's events, in order. */
export function eventRows(actor: Actor, time: number, drafts: readonly EventDraft[]): Insertable<EventsTable>[] {
  const actorText = JSON.stringify(actorRef(actor));
  return drafts.map((draft) => ({
    id: newId('event'),
    network_id: actor.networkId,
    type: draft.type,
    time,
    actor: actorText,
    data: JSON.stringify(draft.data),
    webhook_id: draft.webhookId ?? null,
  }));
}

/** Appends the events of one change; returns their ids in order. */
export async function appendEvents(
  trx: Db,
  actor: Actor,
  time: number,
  drafts: readonly EventDraft[],
): Promise<string[]> {
  if (drafts.length === 0) return [];
  const rows = eventRows(actor, time, drafts);
  await trx.insertInto('events').values(rows).execute();
  return rows.map((row) => row.id);
}

/** Deletes a network's events older than `cutoff` (retention; the outbox is written only here). */
export async function deleteEventsBefore(db: Db, networkId: string, cutoff: number): Promise<void> {
  await db.deleteFrom('events').where('network_id', '=', networkId).where('time', '<', cutoff).execute();
}

/** An outbox row as read: the storage schema's, so the two cannot drift apart. */
export type EventRow = Selectable<EventsTable>;

export function presentEvent(row: EventRow): EventBody {
  return {
    id: row.id,
    type: row.type as EventType,
    time: iso(row.time),
    actor: JSON.parse(row.actor),
    data: JSON.parse(row.data),
  };
}

const FILTER_RE = new RegExp(EVENT_FILTER_PATTERN);

/**
 * Refuses a filter that names no event type: one that is not a type, a family (`device.*`) or
 * `*`, or a well-formed one that no type answers to (`device.exploded`, `nothing.*`), which
 * would otherwise match nothing, silently, for ever. The same rule serves GET /v1/events?type=
 * and a webhook's `events`.
 */
export function checkEventFilters(filters: readonly string[]): void {
  for (const filter of filters) {
    const family = filter.endsWith('.*') ? filter.slice(0, -1) : undefined;
    const known =
      FILTER_RE.test(filter) &&
      (filter === '*' ||
        (family ? EVENT_TYPES.some((t) => t.startsWith(family)) : (EVENT_TYPES as readonly string[]).includes(filter)));
    if (!known) throw invalidRequest(`"${filter}" is not an event type or family (e.g. device.created, device.*)`);
  }
}

/**
 * Whether a type matches a list of filters: exact types, families (`device.*`) and `*`.
 * The same rule serves GET /v1/events?type= and a webhook's `events`.
 */
export function matchesFilters(type: string, filters: readonly string[]): boolean {
  return filters.some(
    (filter) => filter === '*' || filter === type || (filter.endsWith('.*') && type.startsWith(filter.slice(0, -1))),
  );
}

/** Wakes whoever delivers events in this process (the webhook dispatcher) after a commit. */
export type EventListener = () => void;

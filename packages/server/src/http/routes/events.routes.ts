/**
 * GET /v1/events: the network's events, keyset-paged and tailed like the logs.
 *
 * On SQLite a full page is kept as its body (modules/logs/kept-pages.ts): events are numbered
 * in commit order and never changed, so no later event can join a page read full. Retention
 * removes old events, so a kept page is served only while every event it shows is still there:
 * one count over its range of the (network_id, seq) index, instead of reading, parsing and
 * serialising a hundred events again.
 */
import { EVENT_FILTER_PATTERN, EventListQuery, type EventListRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../../core/errors.js';
import { type EventRow, presentEvent } from '../../core/events.js';
import { apiSchema, logPageSchema } from '../../edge/api-schema.js';
import { typeFilter } from '../../modules/events/event-filters.js';
import { KeptPages } from '../../modules/logs/kept-pages.js';
import { fullPage, pageOf, pagePosition, readPage } from '../../modules/logs/paging.js';
import { isPostgres } from '../../storage/database.js';

const FILTER_RE = new RegExp(EVENT_FILTER_PATTERN);
const JSON_TYPE = 'application/json; charset=utf-8';

/** A full page's body and what tells whether retention has removed any of its events since. */
interface KeptEventPage {
  body: Buffer;
  byteLength: number;
  /** The page's last event: it holds the events after the page's start up to this one. */
  lastSeq: number;
}

export async function eventsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const schema = logPageSchema('Event');
  let serialize: ((page: object) => string) | undefined;
  const kept = isPostgres(ctx.db) ? undefined : new KeptPages<KeptEventPage>();
  app.get<{ Querystring: EventListRequest }>(
    '/events',
    {
      config: { scope: 'read' },
      schema: apiSchema(
        {
          operationId: 'listEvents',
          tags: ['events'],
          summary: 'Page through the events (ascending; tail with nextCursor; type=device.* for a family)',
          querystring: EventListQuery,
          response: { 200: schema },
        },
        [400],
      ),
    },
    async (request, reply) => {
      const networkId = request.principal!.networkId;
      const filters = request.query.type ?? [];
      const bad = filters.find((filter) => !FILTER_RE.test(filter));
      if (bad)
        throw invalidRequest(
          `"${bad}" is not an event type filter: use a type (device.created) or a family (device.*)`,
        );
      const fetch = (afterSeq: number, rows: number) =>
        ctx.db
          .selectFrom('events')
          .selectAll()
          .where('network_id', '=', networkId)
          .where('seq', '>', afterSeq)
          .where('webhook_id', 'is', null)
          .where((eb) => typeFilter(eb, filters))
          .orderBy('seq')
          .limit(rows)
          .execute() as Promise<EventRow[]>;
      // How many events the page's query finds in (after, last]: a full page's entries are all
      // still there exactly when these are as many as the page shows, as none can join them.
      const shown = async (after: number, last: number) => {
        const row = await ctx.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('network_id', '=', networkId)
          .where('seq', '>', after)
          .where('seq', '<=', last)
          .where('webhook_id', 'is', null)
          .where((eb) => typeFilter(eb, filters))
          .executeTakeFirstOrThrow();
        return Number(row.n);
      };
      const now = ctx.clock.now();
      const start = kept && (await pagePosition(ctx, 'events', networkId, request.query, now));
      if (kept && start && !start.exhausted) {
        const pageKey = `${networkId}\u0000${start.afterSeq}\u0000${start.limit}\u0000${filters.join(',')}`;
        const hit = kept.get(pageKey);
        if (hit) {
          if ((await shown(start.afterSeq, hit.lastSeq)) === start.limit) {
            return reply.type(JSON_TYPE).send(hit.body);
          }
          kept.drop(pageKey);
        }
        const rows = await fetch(start.afterSeq, start.limit + 1);
        const page = fullPage(ctx.logIds, 'events', rows, start.limit, presentEvent, start.afterSeq);
        if (!page) {
          const cursor = (seq: number) => ctx.logIds.cursor('event', seq);
          return pageOf(rows, start.limit, presentEvent, start.afterSeq, cursor);
        }
        serialize ??= reply.compileSerializationSchema(schema as unknown as Record<string, unknown>) as (
          page: object,
        ) => string;
        const body = Buffer.from(serialize(page));
        const lastSeq = Number(rows[start.limit - 1]!.seq);
        // Counted after the read: retention that removed one of its events meanwhile shows as fewer.
        if ((await shown(start.afterSeq, lastSeq)) === start.limit) {
          kept.keep(pageKey, { body, byteLength: body.length, lastSeq });
        }
        return reply.type(JSON_TYPE).send(body);
      }
      return readPage(ctx, 'events', networkId, request.query, now, fetch, presentEvent);
    },
  );
}

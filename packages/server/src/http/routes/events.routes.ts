/** GET /v1/events: the network's events, keyset-paged and tailed like the logs. */
import { EVENT_FILTER_PATTERN, EventListQuery, type EventListRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../../core/errors.js';
import { type EventRow, presentEvent } from '../../core/events.js';
import { apiSchema, logPageSchema } from '../../edge/api-schema.js';
import { typeFilter } from '../../modules/events/event-filters.js';
import { readPage } from '../../modules/logs/paging.js';

const FILTER_RE = new RegExp(EVENT_FILTER_PATTERN);

export async function eventsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
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
          response: { 200: logPageSchema('Event') },
        },
        [400],
      ),
    },
    async (request) => {
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
      return readPage(ctx, 'events', networkId, request.query, ctx.clock.now(), fetch, presentEvent);
    },
  );
}

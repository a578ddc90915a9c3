/** GET /v1/events: the network's events, keyset-paged and tailed like the logs (modules/events/event-pages.ts). */
import { EventListQuery, type EventListRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { apiSchema, logPageSchema } from '../../edge/api-schema.js';
import { eventPages } from '../../modules/events/event-pages.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export async function eventsRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const schema = logPageSchema('Event');
  const pages = eventPages(ctx);
  let serializer: ((page: object) => string) | undefined;
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
      serializer ??= reply.compileSerializationSchema(schema as unknown as Record<string, unknown>) as (
        page: object,
      ) => string;
      const { body } = await pages(request.principal!.networkId, request.query, serializer);
      return reply.type(JSON_TYPE).send(body);
    },
  );
}

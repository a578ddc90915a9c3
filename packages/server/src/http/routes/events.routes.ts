/** GET /v1/events: the network's events, keyset-paged and tailed like the logs (modules/events/event-pages.ts). */
import { EventListQuery } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { eventPages } from '../../modules/events/event-pages.js';
import { logPageRoute } from '../log-page-route.js';

export async function eventsRoutes(app: FastifyInstance): Promise<void> {
  logPageRoute(app, {
    url: '/events',
    entry: 'Event',
    operationId: 'listEvents',
    tag: 'events',
    summary: 'Page through the events (ascending; tail with nextCursor; type=device.* for a family)',
    querystring: EventListQuery,
    pages: eventPages(app.ctx),
  });
}

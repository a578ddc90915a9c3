/**
 * The connection log as API keys read it: `GET /v1/logs/connections`, paged with keyset
 * cursors. Devices report into it through the node protocol (control/native/).
 */
import { ConnectionLogQuery, type ConnectionLogRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { apiSchema, logPageSchema } from '../../edge/api-schema.js';
import { connectionsPage } from '../../modules/logs/connections.service.js';

export async function connectionLogRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  app.get<{ Querystring: ConnectionLogRequest }>(
    '/logs/connections',
    {
      config: { scope: 'devices' },
      schema: apiSchema(
        {
          operationId: 'listConnectionLog',
          tags: ['logs'],
          summary: 'Page through the connection log (ascending by recording; tail with nextCursor)',
          querystring: ConnectionLogQuery,
          response: { 200: logPageSchema('ConnectionEntry') },
        },
        [400],
      ),
    },
    async (request) => connectionsPage(ctx, request.principal!.networkId, request.query),
  );
}

/**
 * GET /v1/logs/audit: the audit log of the caller's network, keyset-paged like connections;
 * `changes=true` keeps only the calls that changed state (modules/logs/audit-pages.ts).
 */
import { AuditLogQuery, type AuditLogRequest } from '@warren/contract';
import type { FastifyInstance } from 'fastify';
import { apiSchema, logPageSchema } from '../../edge/api-schema.js';
import { auditPages } from '../../modules/logs/audit-pages.js';

const JSON_TYPE = 'application/json; charset=utf-8';

export async function auditLogRoutes(app: FastifyInstance): Promise<void> {
  const { ctx } = app;
  const schema = logPageSchema('AuditEntry');
  const pages = auditPages(ctx);
  let serializer: ((page: object) => string) | undefined;
  app.get<{ Querystring: AuditLogRequest }>(
    '/logs/audit',
    {
      config: { scope: 'read' },
      schema: apiSchema(
        {
          operationId: 'listAuditLog',
          tags: ['logs'],
          summary: 'Page through the audit log (ascending; tail with nextCursor); key and changes filter it',
          querystring: AuditLogQuery,
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
